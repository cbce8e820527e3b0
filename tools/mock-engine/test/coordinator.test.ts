// The mock DP coordinator child (the front side of vLLM's DPCoordinatorProc, vllm/v1/engine/coordinator.py):
// real process, a raw XSUB frontend written directly on zeromq.
import { encodeFrontendWakeup } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { XSubscriber } from "zeromq";
import { type MockCoordinatorProcess, startMockCoordinator } from "../src/index.js";
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
