// The mock DP coordinator child (the front side of vLLM's DPCoordinatorProc, vllm/v1/engine/coordinator.py):
// real process, a raw XSUB frontend written directly on zeromq.
import { encodeFrontendWakeup } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { XSubscriber } from "zeromq";
import { type MockCoordinatorProcess, startMockCoordinator, startMockEngine } from "../src/index.js";
import { ipcAddress } from "./harness.js";

// Real msgspec 0.19.0 bytes of the tuples coordinator.py (c67fe497) publishes, copied from
// packages/protocol/test/vectors/vectors.json ("coordinator.publish_counts", "coordinator.publish_wave_state").
const PUBLISH_COUNTS_HEX = "9392930000cb0000000000000000930102cb3fd000000000000002c3"; // ([[0,0,0.0],[1,2,0.25]], 2, True)
const WAVE_STATE_HEX = (wave: number, running: boolean) =>
  `93c0${wave.toString(16).padStart(2, "0")}${running ? "c3" : "c2"}`;

let coordinator: MockCoordinatorProcess | undefined;
let frontend: XSubscriber | undefined;
afterEach(async () => {
  frontend?.close();
  frontend = undefined;
  await coordinator?.stop();
  coordinator = undefined;
});

async function subscribed(): Promise<XSubscriber> {
  coordinator = await startMockCoordinator({ address: ipcAddress("coord"), engineCount: 2 });
  frontend = new XSubscriber({ linger: 0, receiveTimeout: 10_000 });
  frontend.connect(coordinator.address);
  await frontend.send(Uint8Array.of(0x01));
  await coordinator.subscribers(1);
  return frontend;
}

describe("mock DP coordinator", () => {
  it("publishes (counts, wave, engines_running) byte for byte as msgspec encodes the tuple", async () => {
    const sub = await subscribed();
    await coordinator!.publish(
      [
        [0, 0, 0],
        [1, 2, 0.25],
      ],
      { wave: 2, enginesRunning: true },
    );
    const [payload] = await sub.receive();
    expect(payload!.toString("hex")).toBe(PUBLISH_COUNTS_HEX);
  });

  it("a wake-up while paused marks the engines running and publishes (None, wave, True); once only", async () => {
    const sub = await subscribed();
    await coordinator!.publish(
      [
        [0, 0],
        [0, 0],
      ],
      { wave: 3, enginesRunning: false },
    );
    const [paused] = await sub.receive();
    // A missing kv_cache_usage goes out as 0.0 (EngineState starts at [0, 0, 0.0]).
    expect(paused!.toString("hex")).toBe("9392930000cb0000000000000000930000cb000000000000000003c2");
    await sub.send(encodeFrontendWakeup({ engine: 1, wave: 3 }));
    const [running] = await sub.receive();
    expect(running!.toString("hex")).toBe(WAVE_STATE_HEX(3, true));
    await sub.send(encodeFrontendWakeup({ engine: 0, wave: 3 }));
    await coordinator!.waitForEvent((e) => e.event === "wakeup" && e.engine === 0);
    expect(coordinator!.events.filter((e) => e.event === "published")).toHaveLength(2);
    expect(coordinator!.events).toContainEqual(
      expect.objectContaining({ event: "wakeup", engine: 1, wave: 3, paused: true }),
    );
  });
});

describe("mock DP coordinator with its engine side, and mock engines joining it", () => {
  it("gates on the engines' subscriptions, publishes their request counts, and broadcasts START_DP_WAVE on a wake-up", async () => {
    const backPublish = ipcAddress("coord-in");
    const backOutput = ipcAddress("coord-out");
    coordinator = await startMockCoordinator({
      address: ipcAddress("coord"),
      engineCount: 2,
      engineSide: { publishAddress: backPublish, outputAddress: backOutput },
    });
    const engine = await startMockEngine({
      mode: "bootstrapped",
      inputAddress: ipcAddress("in"),
      outputAddress: ipcAddress("out"),
      coordinatorInput: backPublish,
      coordinatorOutput: backOutput,
      engineIndices: [0, 1],
      extraWaiting: 7,
      extraWaitingEngines: [1],
    });
    try {
      await coordinator.waitForEvent((e) => e.event === "engines-ready");
      for (const engineIndex of [0, 1]) {
        await engine.waitForEvent((e) => e.event === "coordinator-ready" && e.engineIndex === engineIndex);
      }
      // Engine 1's counts changed from (0, 0): it publishes them; idle engine 0 publishes nothing.
      const published = await coordinator.waitForEvent(
        (e) => e.event === "published" && e.counts?.[1]?.[0] === 7,
      );
      expect(published).toMatchObject({
        counts: [
          [0, 0, 0],
          [7, 0, 0],
        ],
        wave: 0,
        enginesRunning: false,
      });
      expect(coordinator.events).not.toContainEqual(
        expect.objectContaining({ event: "engine-counts", engineIndex: 0 }),
      );

      frontend = new XSubscriber({ linger: 0, receiveTimeout: 10_000 });
      frontend.connect(coordinator.address);
      await frontend.send(Uint8Array.of(0x01));
      await coordinator.subscribers(1);
      await frontend.send(encodeFrontendWakeup({ engine: 0, wave: 0 }));
      // START_DP_WAVE reaches every engine (the excluded one ignores it in vLLM; the mock logs both).
      for (const engineIndex of [0, 1]) {
        await engine.waitForEvent(
          (e) => e.event === "coordinator-message" && e.engineIndex === engineIndex && e.typeByte === 0x02,
        );
      }
      // The counts are republished on a timer (every 100 ms after a change, otherwise every few seconds, as
      // DPCoordinatorProc does), so a counts message may come first; the wave state is the one whose counts are nil.
      const running = await receiveWaveState(frontend);
      expect(running.toString("hex")).toBe(WAVE_STATE_HEX(0, true));
    } finally {
      await engine.stop();
    }
  });
});

/** The next `(None, wave, running)` message, skipping counts publishes (bounded by the socket's receive timeout). */
async function receiveWaveState(socket: XSubscriber): Promise<Buffer> {
  for (let skipped = 0; skipped < 100; skipped++) {
    const [payload] = await socket.receive();
    // fixarray(3) then nil: a wave-state message; fixarray(3) then an array: counts.
    if (payload![0] === 0x93 && payload![1] === 0xc0) return payload!;
  }
  throw new Error("no wave-state message among 100 publishes");
}
