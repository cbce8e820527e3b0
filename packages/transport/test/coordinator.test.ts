import {
  decodeFrontendWakeup,
  decodeStartDpWavePayload,
  type EngineHandshakeMetadata,
  encodeCoordinatorPublish,
  encodeEngineCoreOutputs,
  RequestType,
} from "@vllm-engine-core/protocol";
import { afterAll, describe, expect, it } from "vitest";
import * as zmq from "zeromq";
import { ipcDir } from "./helpers/addresses.ts";
import { useCleanups } from "./helpers/cleanup.ts";
import { RawEngine } from "./helpers/raw-engine.ts";
import { isDead, TransportWorker } from "./helpers/worker-harness.ts";
import type { CoordinatorState } from "./worker/protocol.ts";

const ipc = ipcDir();
const defer = useCleanups();
afterAll(() => ipc.remove());

function worker(): TransportWorker {
  const w = new TransportWorker();
  defer(() => w.exit());
  return w;
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)),
    ),
  ]).finally(() => clearTimeout(timer));
}

/** The engine side of the in-proc coordinator, as a DPEngineCoreProc drives it. */
class CoordinatedEngine extends RawEngine {
  subscriber: zmq.XSubscriber | undefined;
  publisher: zmq.Push | undefined;

  async joinCoordinator(init: EngineHandshakeMetadata): Promise<void> {
    this.subscriber = new zmq.XSubscriber({ linger: 0 });
    this.subscriber.connect(init.addresses.coordinatorInput!);
    this.publisher = new zmq.Push({ linger: 0 });
    this.publisher.connect(init.addresses.coordinatorOutput!);
    defer(() => {
      this.subscriber?.close();
      this.publisher?.close();
    });
    await this.subscriber.send(Uint8Array.of(0x01));
  }

  async nextBroadcast(): Promise<Buffer[]> {
    return within(this.subscriber!.receive(), 5000, "coordinator broadcast");
  }
}

async function coordinatedStartup(handshakeAddress: string, engine: CoordinatedEngine): Promise<void> {
  const init = await engine.hello(handshakeAddress);
  expect(init.addresses.coordinatorInput).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
  expect(init.addresses.coordinatorOutput).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
  await engine.register(init.addresses.inputs[0]!);
  engine.connectOutput(init.addresses.outputs[0]!);
  await engine.joinCoordinator(init);
  const gate = await engine.nextBroadcast();
  expect(gate.map((f) => f.toString())).toEqual(["READY"]);
  await engine.sendStatus("READY");
}

describe("in-process coordinator", () => {
  it("runs the startup gate, then keeps the wave state and broadcasts START_DP_WAVE", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, engineCount: 2 },
      coordinator: { mode: "inproc" },
    });
    const engines = [new CoordinatedEngine(0), new CoordinatedEngine(1)];
    defer(() => {
      for (const e of engines) e.close();
    });
    await Promise.all(engines.map((e) => coordinatedStartup(handshakeAddress, e)));
    await connecting;
    await w.request({ op: "start-output" });
    expect(await w.request<CoordinatorState>({ op: "coordinator-state" })).toEqual({
      currentWave: 0,
      enginesRunning: false,
    });

    // First request while paused: START_DP_WAVE(current wave, exclude = the request's engine) to everyone.
    await w.request({ op: "coordinator-notify", engineIndex: 1 });
    for (const engine of engines) {
      const [type, payload] = await engine.nextBroadcast();
      expect([...type!]).toEqual([RequestType.START_DP_WAVE]);
      expect(decodeStartDpWavePayload(payload!)).toEqual({ wave: 0, excludeEngineIndex: 1 });
    }
    expect(await w.request<CoordinatorState>({ op: "coordinator-state" })).toEqual({
      currentWave: 0,
      enginesRunning: true,
    });
    await w.request({ op: "coordinator-notify", engineIndex: 0 }); // already running: no broadcast

    // Rank 0 reports the wave complete: paused, next wave.
    await engines[0]!.publisher!.send(encodeEngineCoreOutputs({ engineIndex: 0, waveComplete: 0 }));
    await expect
      .poll(() => w.request<CoordinatorState>({ op: "coordinator-state" }))
      .toEqual({
        currentWave: 1,
        enginesRunning: false,
      });

    // An engine that got a request for a newer wave starts it: re-broadcast excluding that engine.
    await engines[1]!.publisher!.send(encodeEngineCoreOutputs({ engineIndex: 1, startWave: 3 }));
    for (const engine of engines) {
      const [, payload] = await engine.nextBroadcast();
      expect(decodeStartDpWavePayload(payload!)).toEqual({ wave: 3, excludeEngineIndex: 1 });
    }
    expect(await w.request<CoordinatorState>({ op: "coordinator-state" })).toEqual({
      currentWave: 3,
      enginesRunning: true,
    });
    expect(w.events.filter(isDead)).toEqual([]);
  });

  it("rejects a READY that arrives before the gate opened", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, engineCount: 2 },
      coordinator: { mode: "inproc" },
    });
    const engine = new CoordinatedEngine(0);
    defer(() => engine.close());
    await engine.hello(handshakeAddress);
    await engine.sendStatus("READY");
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      detail: expect.stringContaining("READY before the coordinator startup gate"),
    });
  });

  it("an engine that dies during the gate (before subscribing): EngineDeadError at once, not the COORDINATOR timeout", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const started = Date.now();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
      coordinator: { mode: "inproc" },
    });
    const engine = new CoordinatedEngine(0);
    defer(() => engine.close());
    await engine.hello(handshakeAddress);
    engine.close(); // dies while loading, before it subscribes to the coordinator
    await expect(connecting).rejects.toMatchObject({ name: "EngineDeadError", engineIndex: 0 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("rejects a READY sent while the gate waits for subscriptions", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 20_000 },
      coordinator: { mode: "inproc" },
    });
    const engine = new CoordinatedEngine(0);
    defer(() => engine.close());
    await engine.hello(handshakeAddress); // the only engine: the gate is now open for subscriptions
    await engine.sendStatus("READY");
    await expect(connecting).rejects.toMatchObject({
      name: "UnexpectedHandshakeMessageError",
      detail: expect.stringContaining("READY before the coordinator startup gate"),
    });
  });

  it("times out at the COORDINATOR stage when engines never subscribe", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, readyTimeoutMs: 500 },
      coordinator: { mode: "inproc" },
    });
    const engine = new CoordinatedEngine(0);
    defer(() => engine.close());
    const init = await engine.hello(handshakeAddress);
    await expect(connecting).rejects.toMatchObject({
      name: "HandshakeTimeoutError",
      stage: "COORDINATOR",
      address: init.addresses.coordinatorInput,
      timeoutMs: 500,
    });
  });

  it("reports request outputs on the coordinator socket as a coordinator failure", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress },
      coordinator: { mode: "inproc" },
    });
    const engine = new CoordinatedEngine(0);
    defer(() => engine.close());
    await coordinatedStartup(handshakeAddress, engine);
    await connecting;
    await w.request({ op: "start-output" });
    await engine.publisher!.send(
      encodeEngineCoreOutputs({ engineIndex: 0, outputs: [{ requestId: "r", newTokenIds: [1] }] }),
    );
    const dead = await w.waitForEvent(isDead);
    expect(dead.engineIndex).toBeNull();
    expect(dead.reason).toContain("in-process coordinator failed");
  });
});

describe("external coordinator", () => {
  it("subscribes, follows published wave state and sends the wake-up once per pause", async () => {
    const coordinatorAddress = ipc.address("coord");
    const coordinator = new zmq.XPublisher({ linger: 0 });
    defer(() => coordinator.close());
    await coordinator.bind(coordinatorAddress);
    const inputAddress = ipc.address("in");
    const outputAddress = ipc.address("out");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "bootstrapped", inputAddress, outputAddress },
      coordinator: { mode: "external", address: coordinatorAddress },
    });
    const engine = new RawEngine(0);
    defer(() => engine.close());
    await engine.register(inputAddress);
    await connecting;
    await w.request({ op: "start-output" });

    const [subscription] = await within(coordinator.receive(), 5000, "subscription");
    expect([...subscription!]).toEqual([0x01]);
    await coordinator.send(encodeCoordinatorPublish({ counts: [[0, 0, 0]], wave: 4, enginesRunning: false }));
    await expect
      .poll(() => w.request<CoordinatorState>({ op: "coordinator-state" }))
      .toEqual({
        currentWave: 4,
        enginesRunning: false,
        // The published per-engine [waiting, running, kv_cache_usage], for DP engine choice.
        counts: [[0, 0, 0]],
      });

    await w.request({ op: "coordinator-notify", engineIndex: 0 });
    const [wakeup] = await within(coordinator.receive(), 5000, "wake-up");
    expect(decodeFrontendWakeup(wakeup!)).toEqual({ engine: 0, wave: 4 });
    await w.request({ op: "coordinator-notify", engineIndex: 0 }); // running now: nothing more is sent
    await coordinator.send(encodeCoordinatorPublish({ counts: null, wave: 5, enginesRunning: false }));
    await expect
      .poll(() => w.request<CoordinatorState>({ op: "coordinator-state" }))
      .toEqual({
        currentWave: 5,
        enginesRunning: false,
        // A publish without counts keeps the last ones (DPAsyncMPClient only replaces lb_engines on counts).
        counts: [[0, 0, 0]],
      });
    await w.request({ op: "coordinator-notify", engineIndex: 0 });
    const [second] = await within(coordinator.receive(), 5000, "second wake-up");
    expect(decodeFrontendWakeup(second!)).toEqual({ engine: 0, wave: 5 });
  });

  it("reports a malformed publish as a coordinator failure", async () => {
    const coordinatorAddress = ipc.address("coord");
    const coordinator = new zmq.XPublisher({ linger: 0 });
    defer(() => coordinator.close());
    await coordinator.bind(coordinatorAddress);
    const inputAddress = ipc.address("in");
    const outputAddress = ipc.address("out");
    const w = worker();
    const connecting = w.connect({
      config: { mode: "bootstrapped", inputAddress, outputAddress },
      coordinator: { mode: "external", address: coordinatorAddress },
    });
    const engine = new RawEngine(0);
    defer(() => engine.close());
    await engine.register(inputAddress);
    await connecting;
    await w.request({ op: "start-output" });
    await within(coordinator.receive(), 5000, "subscription");
    await coordinator.send(["two", "frames"]);
    const dead = await w.waitForEvent(isDead);
    expect(dead).toMatchObject({
      engineIndex: null,
      reason: expect.stringContaining("external coordinator"),
    });
  });

  it("is refused in handshake-owner mode (the in-process coordinator is used there)", async () => {
    const w = worker();
    await expect(
      w.connect({
        config: { mode: "handshake-owner", handshakeAddress: ipc.address("hs") },
        coordinator: { mode: "external", address: ipc.address("coord") },
      }),
    ).rejects.toMatchObject({
      // Validated by the one schema (resolveConfig) before the transport is called; see startup-errors.test.ts.
      name: "InvalidConfigError",
      message: expect.stringContaining("only supported with the bootstrapped transport"),
    });
  });
});
