import { expectedTokens, type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import {
  type EngineCoreRequest,
  encodeAbortRequest,
  encodeAddRequest,
  FinishReason,
} from "@vllm-engine-core/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { freeTcpAddress, ipcDir } from "./helpers/addresses.ts";
import { useCleanups } from "./helpers/cleanup.ts";
import { assertBindable, RawEngine } from "./helpers/raw-engine.ts";
import { isBad, isDead, isOutputs, TransportWorker } from "./helpers/worker-harness.ts";
import type { WorkerEvent } from "./worker/protocol.ts";

const ipc = ipcDir();
const defer = useCleanups();
afterAll(() => ipc.remove());

function worker(): TransportWorker {
  const w = new TransportWorker();
  defer(() => w.exit());
  return w;
}

async function mockEngine(options: Parameters<typeof startMockEngine>[0]): Promise<MockEngineProcess> {
  const engine = await startMockEngine(options);
  defer(async () => {
    engine.kill("SIGCONT"); // in case a test stopped it
    await engine.stop();
  });
  return engine;
}

function request(requestId: string, maxTokens: number): EngineCoreRequest {
  return {
    requestId,
    promptTokenIds: [11, 12, 13],
    mmFeatures: null,
    samplingParams: { maxTokens },
    poolingParams: null,
    arrivalTime: 0,
    loraRequest: null,
    cacheSalt: null,
    dataParallelRank: null,
  };
}

/** A worker connected (handshake-owner) to `count` raw engines, output loop running. */
async function withRawEngines(
  count: number,
  options: { localOutputAddress?: string; sentinelAttributionWindowMs?: number } = {},
) {
  const handshakeAddress = ipc.address("hs");
  const w = worker();
  const { sentinelAttributionWindowMs, ...local } = options;
  const connecting = w.connect({
    config: { mode: "handshake-owner", handshakeAddress, engineCount: count, ...local },
    ...(sentinelAttributionWindowMs === undefined ? {} : { sentinelAttributionWindowMs }),
  });
  const engines = Array.from({ length: count }, (_, index) => new RawEngine(index));
  defer(() => {
    for (const e of engines) e.close();
  });
  const inits = await Promise.all(engines.map((e) => e.startup(handshakeAddress)));
  const result = await connecting;
  await w.request({ op: "start-output" });
  return { w, engines, result, inits };
}

/** A worker connected to one mock-engine process per engine index. */
async function withMockEngines(
  indices: number[],
  extra: {
    heartbeat?: { intervalMs: number; timeoutMs: number };
    faults?: Record<string, number>;
    vanishGraceMs?: number;
  } = {},
) {
  const handshakeAddress = ipc.address("hs");
  const w = worker();
  const connecting = w.connect({
    config: {
      mode: "handshake-owner",
      handshakeAddress,
      engineCount: indices.length,
      readyTimeoutMs: 10_000,
      ...(extra.vanishGraceMs === undefined ? {} : { vanishGraceMs: extra.vanishGraceMs }),
    },
    ...(extra.heartbeat === undefined ? {} : { heartbeat: extra.heartbeat }),
  });
  const engines = await Promise.all(
    indices.map((index) =>
      mockEngine({
        mode: "handshake",
        handshakeAddress,
        engineIndices: [index],
        ...(extra.faults === undefined ? {} : { faults: extra.faults }),
      }),
    ),
  );
  const result = await connecting;
  return { w, engines, result };
}

const deadEvents = (w: TransportWorker) => w.events.filter(isDead);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("sending", () => {
  it("delivers concurrent sends through one serial queue, in order, identity stripped, aux frames kept", async () => {
    const { w, engines } = await withRawEngines(1);
    const sends = Array.from({ length: 50 }, (_, i) =>
      w.request({
        op: "send",
        engineIndex: 0,
        frames: [...encodeAbortRequest([`r${i}`]), Uint8Array.of(i, 0xff)],
      }),
    );
    await Promise.all(sends);
    for (let i = 0; i < 50; i++) {
      const frames = await engines[0]!.receiveRequest();
      const expected = [...encodeAbortRequest([`r${i}`]), Uint8Array.of(i, 0xff)];
      expect(frames.map((f) => f.toString("hex"))).toEqual(
        expected.map((f) => Buffer.from(f).toString("hex")),
      );
    }
  });

  it("an ADD reaches the mock engine and its outputs come back in order", async () => {
    const { w, engines } = await withMockEngines([0]);
    await w.request({ op: "start-output" });
    await w.request({ op: "send", engineIndex: 0, frames: encodeAddRequest(request("req-a", 4)) });
    const added = await engines[0]!.waitForEvent((e) => e.event === "add");
    expect(added.requestId).toBe("req-a");
    const finished = await w.waitForEvent(
      (e): e is Extract<WorkerEvent, { kind: "outputs" }> =>
        isOutputs(e) && e.outputs.outputs.some((o) => o.requestId === "req-a" && o.finishReason !== null),
    );
    expect(finished.outputs.outputs.at(-1)?.finishReason).toBe(FinishReason.LENGTH);
    const tokens = w.events
      .filter(isOutputs)
      .flatMap((e) => e.outputs.outputs)
      .filter((o) => o.requestId === "req-a")
      .flatMap((o) => o.newTokenIds);
    expect(tokens).toEqual(expectedTokens("req-a", [11, 12, 13], 4));
  });

  it("rejects sends to an engine index that is not connected", async () => {
    const { w } = await withRawEngines(1);
    await expect(
      w.request({ op: "send", engineIndex: 5, frames: encodeAbortRequest(["x"]) }),
    ).rejects.toMatchObject({
      name: "InvalidDataParallelRankError",
      rank: 5,
      engineIndices: [0],
    });
  });
});

describe("the output loop", () => {
  it("reports an undecodable message and keeps running", async () => {
    const { w, engines } = await withRawEngines(1);
    await engines[0]!.pushFrames([Uint8Array.of(0xc1)]);
    await engines[0]!.pushOutputs({ outputs: [], timestamp: 7 });
    const bad = await w.waitForEvent(isBad);
    expect(bad.error).toMatchObject({ __vllmError: "ProtocolError" });
    expect(bad.frameCount).toBe(1);
    expect(bad.senders).toEqual([0]);
    const outputs = await w.waitForEvent(isOutputs);
    expect(outputs.outputs.timestamp).toBe(7);
    expect(w.events.indexOf(bad)).toBeLessThan(w.events.indexOf(outputs));
  });

  it("names the engines that push to the socket an undecodable message came on", async () => {
    const own = await withRawEngines(2);
    await own.engines[1]!.pushFrames([Uint8Array.of(0xc1)]);
    expect((await own.w.waitForEvent(isBad)).senders).toEqual([1]);
    const shared = await withRawEngines(2, { localOutputAddress: ipc.address("shared-out") });
    await shared.engines[1]!.pushFrames([Uint8Array.of(0xc1)]);
    expect((await shared.w.waitForEvent(isBad)).senders).toEqual([0, 1]);
  });

  it("reports the mock engine's garbage frame and keeps streaming", async () => {
    const { w, engines } = await withMockEngines([0], { faults: { garbageFrameAfterSteps: 1 } });
    await w.request({ op: "start-output" });
    await w.request({ op: "send", engineIndex: 0, frames: encodeAddRequest(request("req-g", 6)) });
    await w.waitForEvent(isBad);
    await w.waitForEvent(
      (e): e is Extract<WorkerEvent, { kind: "outputs" }> =>
        isOutputs(e) && e.outputs.outputs.some((o) => o.requestId === "req-g" && o.finishReason !== null),
    );
    expect(engines[0]!.events.some((e) => e.event === "fault")).toBe(true);
  });

  it("ENGINE_CORE_DEAD from the only engine is attributed to it", async () => {
    const { w, engines } = await withRawEngines(1);
    await engines[0]!.pushDead();
    const dead = await w.waitForEvent(isDead);
    expect(dead.engineIndex).toBe(0);
    expect(dead.reason).toContain("ENGINE_CORE_DEAD");
    await expect(
      w.request({ op: "send", engineIndex: 0, frames: encodeAbortRequest(["x"]) }),
    ).rejects.toMatchObject({
      name: "EngineDeadError",
      engineIndex: 0,
    });
  });

  it("each engine gets its own output socket, so ENGINE_CORE_DEAD from engine 1 of 2 names engine 1 at once", async () => {
    const { w, engines, result, inits } = await withRawEngines(2);
    const [a, b] = inits.map((init) => init.addresses.outputs);
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(a![0]).not.toBe(b![0]);
    expect(new Set(result.engines.map((e) => e.outputAddress))).toEqual(new Set([a![0], b![0]]));
    expect(result.outputAddress).toBe(result.engines[0]!.outputAddress);
    await engines[1]!.pushDead();
    const dead = await w.waitForEvent(isDead);
    expect(dead.engineIndex).toBe(1);
    expect(dead.reason).toContain("ENGINE_CORE_DEAD");
    // Engine 1's process is still up (its sockets are open): attribution did not wait for it to go.
    await engines[0]!.pushOutputs({ outputs: [], timestamp: 42 });
    await w.waitForEvent(
      (e): e is Extract<WorkerEvent, { kind: "outputs" }> => isOutputs(e) && e.outputs.timestamp === 42,
    );
    await w.request({ op: "send", engineIndex: 0, frames: encodeAbortRequest(["still-alive"]) });
    expect((await engines[0]!.receiveRequest()).length).toBe(2);
    await sleep(100);
    expect(deadEvents(w)).toHaveLength(1);
  });

  it("output sockets follow HELLO order, not identity order: engine 1 first, and engine 0's sentinel still names 0", async () => {
    const handshakeAddress = ipc.address("hs");
    const w = worker();
    const connecting = w.connect({ config: { mode: "handshake-owner", handshakeAddress, engineCount: 2 } });
    const engines = [new RawEngine(0), new RawEngine(1)];
    defer(() => {
      for (const e of engines) e.close();
    });
    const init1 = await engines[1]!.startup(handshakeAddress); // says HELLO first
    const init0 = await engines[0]!.startup(handshakeAddress);
    const result = await connecting;
    await w.request({ op: "start-output" });
    expect(result.engines.map((e) => [e.index, e.outputAddress])).toEqual([
      [0, init0.addresses.outputs[0]],
      [1, init1.addresses.outputs[0]],
    ]);
    await engines[0]!.pushDead();
    const dead = await w.waitForEvent(isDead);
    expect(dead.engineIndex).toBe(0);
    await sleep(100);
    expect(deadEvents(w)).toHaveLength(1);
  });

  it("on a shared output socket the sentinel is attributed to the engine whose connection closes next", async () => {
    const { w, engines, inits } = await withRawEngines(2, { localOutputAddress: ipc.address("shared-out") });
    expect(inits[0]!.addresses.outputs).toEqual(inits[1]!.addresses.outputs);
    await engines[1]!.pushDead();
    await sleep(200);
    expect(deadEvents(w)).toHaveLength(0); // not yet attributable
    engines[1]!.close(); // vLLM's engine exits right after the sentinel
    const dead = await w.waitForEvent(isDead);
    expect(dead.engineIndex).toBe(1);
    expect(dead.reason).toContain("ENGINE_CORE_DEAD");
    expect(dead.reason).toContain("attributed by its input connection closing");
    await w.request({ op: "send", engineIndex: 0, frames: encodeAbortRequest(["still-alive"]) });
    expect((await engines[0]!.receiveRequest()).length).toBe(2);
    await sleep(200);
    expect(deadEvents(w)).toHaveLength(1);
  });

  it("on a shared output socket an unattributable sentinel fails every engine on it after the window", async () => {
    const WINDOW = 600;
    const { w, engines } = await withRawEngines(2, {
      localOutputAddress: ipc.address("shared-out"),
      sentinelAttributionWindowMs: WINDOW,
    });
    const sentAt = Date.now();
    await engines[0]!.pushDead();
    const first = await w.waitForEvent(isDead, WINDOW + 5000);
    await sleep(100);
    const deaths = deadEvents(w);
    expect(deaths.map((d) => d.engineIndex).sort()).toEqual([0, 1]);
    expect(first.at - sentAt).toBeGreaterThanOrEqual(WINDOW - 100);
    for (const d of deaths)
      expect(d.reason).toMatch(/shared by engines 0, 1 and none of them disconnected within 600 ms/);
  });

  it("on a shared output socket a sentinel read after its sender was reported gone is ambiguous: the live engines fail after the window", async () => {
    // The two signals travel on different sockets. Here engine 1's disconnect is read first and already
    // reported when its sentinel is read, so the sentinel could as well be engine 0's: engine 0 is failed
    // after the window unless it disconnects (as vLLM's clients fail every engine) — never left hanging.
    const WINDOW = 600;
    const { w, engines } = await withRawEngines(2, {
      localOutputAddress: ipc.address("shared-out"),
      sentinelAttributionWindowMs: WINDOW,
    });
    engines[1]!.input!.close();
    const vanished = await w.waitForEvent(isDead);
    expect(vanished.engineIndex).toBe(1);
    expect(vanished.reason).toContain("without ENGINE_CORE_DEAD");
    await engines[1]!.pushDead();
    await sleep(WINDOW + 400);
    const deaths = deadEvents(w);
    expect(deaths.map((d) => d.engineIndex)).toEqual([1, 0]);
    expect(deaths[1]!.reason).toMatch(/shared by engine 0 and none of them disconnected/);
  });

  it("on a shared output socket, with the other engine gone long before, the only live engine is the sender at once", async () => {
    const WINDOW = 400;
    const { w, engines } = await withRawEngines(2, {
      localOutputAddress: ipc.address("shared-out"),
      sentinelAttributionWindowMs: WINDOW,
    });
    engines[0]!.input!.close(); // engine 0 vanishes (SIGKILL-like) …
    expect((await w.waitForEvent(isDead)).engineIndex).toBe(0);
    await sleep(WINDOW + 200); // … well outside the window
    const sentAt = Date.now();
    await engines[1]!.pushDead(); // engine 1 stays connected (a hung teardown)
    const dead = await w.waitForEvent(
      (e): e is Extract<WorkerEvent, { kind: "dead" }> => isDead(e) && e.engineIndex === 1,
    );
    expect(dead.reason).toContain("ENGINE_CORE_DEAD");
    expect(dead.at - sentAt).toBeLessThan(WINDOW);
  });

  it("on a shared output socket a disconnect and a sentinel arriving together fail only the sender", async () => {
    const { w, engines } = await withRawEngines(2, { localOutputAddress: ipc.address("shared-out") });
    engines[1]!.input!.close();
    await engines[1]!.pushDead(); // likely read within the 50 ms grace of the disconnect
    const dead = await w.waitForEvent(isDead);
    expect(dead.engineIndex).toBe(1);
    await sleep(300);
    expect(deadEvents(w).map((d) => d.engineIndex)).toEqual([1]);
  });

  it("the mock engine's dead sentinel is reported once, even though the process then exits", async () => {
    const { w, engines } = await withMockEngines([0], { faults: { deadSentinelAfterSteps: 2 } });
    await w.request({ op: "start-output" });
    await w.request({ op: "send", engineIndex: 0, frames: encodeAddRequest(request("req-d", 50)) });
    const dead = await w.waitForEvent(isDead);
    expect(dead).toMatchObject({ engineIndex: 0, reason: expect.stringContaining("ENGINE_CORE_DEAD") });
    await engines[0]!.exited;
    await sleep(300); // the input disconnect that follows must not produce a second report
    expect(deadEvents(w)).toHaveLength(1);
  });
});

describe("vanished engines", () => {
  it("a SIGKILLed engine process is reported with its engine index; the others keep working", async () => {
    const { w, engines } = await withMockEngines([0, 1, 2]);
    await w.request({ op: "start-output" });
    const killedAt = Date.now();
    engines[1]!.kill("SIGKILL");
    const dead = await w.waitForEvent(isDead, 5000);
    expect(dead.engineIndex).toBe(1);
    expect(dead.reason).toContain("without ENGINE_CORE_DEAD");
    // Measured on loopback: a few ms for the disconnect plus the 50 ms grace for in-flight outputs.
    expect(dead.at - killedAt).toBeLessThan(2000);
    await expect(
      w.request({ op: "send", engineIndex: 1, frames: encodeAbortRequest(["x"]) }),
    ).rejects.toMatchObject({
      name: "EngineDeadError",
      engineIndex: 1,
    });
    await w.request({ op: "send", engineIndex: 2, frames: encodeAbortRequest(["still-alive"]) });
    const abort = await engines[2]!.waitForEvent((e) => e.event === "abort");
    expect(abort.requestIds).toEqual(["still-alive"]);
    await sleep(200);
    expect(deadEvents(w)).toHaveLength(1);
  });

  it("sends to the only engine inside its vanish grace reject with EngineDeadError at once, and block nothing", async () => {
    // With ROUTER_MANDATORY the input socket is not writable once the last engine's pipe is gone: a send that
    // waited for writability (zeromq.js's default) hung forever, and every send queued behind it.
    const { w, engines } = await withMockEngines([0], { vanishGraceMs: 3_000 });
    await w.request({ op: "start-output" });
    engines[0]!.kill("SIGKILL");
    await engines[0]!.exited;
    await sleep(300); // the disconnect notification is read; the death is reported only after the grace
    expect(deadEvents(w)).toEqual([]);
    const started = Date.now();
    const sends = [encodeAddRequest(request("in-grace", 5)), encodeAbortRequest(["x"])].map((frames) =>
      w.request({ op: "send", engineIndex: 0, frames }),
    );
    for (const send of sends)
      await expect(send).rejects.toMatchObject({ name: "EngineDeadError", engineIndex: 0 });
    expect(Date.now() - started).toBeLessThan(2_000); // well inside the 3 s grace: not the death report
    expect(deadEvents(w)).toEqual([]);
    expect((await w.waitForEvent(isDead, 10_000)).engineIndex).toBe(0);
  });

  it("an engine that crashes mid-stream (crashAfterSteps) is reported", async () => {
    const { w, engines } = await withMockEngines([0], { faults: { crashAfterSteps: 3 } });
    await w.request({ op: "start-output" });
    await w.request({ op: "send", engineIndex: 0, frames: encodeAddRequest(request("req-c", 100)) });
    const dead = await w.waitForEvent(isDead, 5000);
    expect(dead.engineIndex).toBe(0);
    expect((await engines[0]!.exited).signal).toBe("SIGKILL");
  });

  it("a frozen engine (SIGSTOP) is detected through ZMTP heartbeats", async () => {
    const { w, engines } = await withMockEngines([0, 1], { heartbeat: { intervalMs: 100, timeoutMs: 500 } });
    await w.request({ op: "start-output" });
    const stoppedAt = Date.now();
    engines[0]!.kill("SIGSTOP");
    const dead = await w.waitForEvent(isDead, 5000);
    expect(dead.engineIndex).toBe(0);
    expect(dead.reason).toContain("heartbeats for 500 ms");
    expect(dead.at - stoppedAt).toBeGreaterThanOrEqual(400);
    expect(deadEvents(w)).toHaveLength(1);
  });

  it("a vanish before startOutputLoop is delivered when the loop starts", async () => {
    const { w, engines } = await withMockEngines([0]);
    engines[0]!.kill("SIGKILL");
    await engines[0]!.exited;
    await sleep(300);
    expect(w.events).toEqual([]);
    await w.request({ op: "start-output" });
    const dead = await w.waitForEvent(isDead);
    expect(dead.engineIndex).toBe(0);
  });
});

describe("close", () => {
  it("is idempotent, rejects later sends, frees the addresses and leaves no handles", async () => {
    const handshakeAddress = await freeTcpAddress();
    const localInputAddress = await freeTcpAddress();
    const localOutputAddress = await freeTcpAddress();
    const w = worker();
    const connecting = w.connect({
      config: { mode: "handshake-owner", handshakeAddress, localInputAddress, localOutputAddress },
    });
    const engine = new RawEngine(0);
    defer(() => engine.close());
    await engine.startup(handshakeAddress);
    await connecting;
    await w.request({ op: "start-output" });
    // While open the transport holds the thread (pending receives alone would not).
    expect(await w.request<string[]>({ op: "resources" })).toContain("Timeout");
    await Promise.all([w.request({ op: "close" }), w.request({ op: "close" })]);
    await assertBindable([handshakeAddress, localInputAddress, localOutputAddress]);
    await sleep(20);
    expect(await w.request<string[]>({ op: "resources" })).toEqual([]);
    await expect(
      w.request({ op: "send", engineIndex: 0, frames: encodeAbortRequest(["x"]) }),
    ).rejects.toThrow("no connected transport");
    engine.close();
    await sleep(100);
    expect(deadEvents(w)).toEqual([]); // closing is not an engine death
  });
});
