// Data-parallel routing on an external coordinator's published request counts, with real
// processes and sockets: the mock DP coordinator (tools/mock-engine, the front side of vLLM's
// DPCoordinatorProc) publishes `(counts, wave, running)`, two mock engines serve the bootstrapped transport,
// and the public client routes unpinned requests as vLLM's DPLBAsyncMPClient.get_core_engine_for_request
// (vllm/v1/engine/core_client.py) does: score max(inFlight, waiting + running) (+ the KV-pressure penalty),
// a scan from a start index that rotates after every pick, and a local bump of the picked engine's waiting
// count until the next publish.
//
// Every publish carries a new wave number. The client stamps the wave it knows into each ADD (current_wave,
// DPAsyncMPClient.add_request_async) and the mock engine logs it, so a pinned probe tells when the client has
// taken a publish in — no sleeping on the publish's delivery.
import {
  type MockCoordinatorProcess,
  type MockEngineCounts,
  type MockEngineProcess,
  startMockCoordinator,
  startMockEngine,
} from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import { EngineCoreClient } from "../src/index.js";
import { chatRequest, collect, connectToMockEngine, ipcAddress } from "./helpers.js";

interface Setup {
  coordinator: MockCoordinatorProcess;
  engine: MockEngineProcess;
  client: EngineCoreClient;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(): Promise<Setup> {
  const address = ipcAddress("coord");
  const inputAddress = ipcAddress("in");
  const outputAddress = ipcAddress("out");
  const coordinator = await startMockCoordinator({ address, engineCount: 2 });
  cleanups.push(() => coordinator.stop());
  const engine = await startMockEngine({
    mode: "bootstrapped",
    inputAddress,
    outputAddress,
    engineIndices: [0, 1],
    stepMs: 2,
  });
  cleanups.push(() => engine.stop());
  const client = await EngineCoreClient.connect({
    transport: { mode: "bootstrapped", inputAddress, outputAddress, engineCount: 2, readyTimeoutMs: 20_000 },
    coordinator: { mode: "external", address },
  });
  cleanups.push(() => client.shutdown());
  await coordinator.subscribers(1);
  return { coordinator, engine, client };
}

let probes = 0;

/** Publishes `counts` under a new wave and returns once the client routes with them. */
async function publish(
  { coordinator, engine, client }: Setup,
  counts: MockEngineCounts[],
  enginesRunning = true,
): Promise<void> {
  const { wave } = await coordinator.publish(counts, {
    wave: (coordinator.events.filter((e) => e.event === "published").at(-1)?.wave ?? 0) + 1,
    enginesRunning,
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    // A pinned request neither reads the counts nor moves the start index (get_core_engine_for_request).
    const requestId = `probe-${probes++}`;
    await collect(await client.call({ ...chatRequest(requestId, 1), dataParallelRank: 0 }));
    const add = await engine.waitForEvent((e) => e.event === "add" && e.requestId === requestId);
    if ((add.currentWave as number) >= wave) return;
    if (Date.now() > deadline) throw new Error(`the client did not take in the publish of wave ${wave}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** One unpinned request at a time, each finished before the next: in-flight counts stay 0 between picks. */
async function oneByOne(client: EngineCoreClient, tag: string, n: number): Promise<number[]> {
  const engines: number[] = [];
  for (let i = 0; i < n; i++) {
    const stream = await client.call(chatRequest(`${tag}-${i}`, 2));
    engines.push(stream.engineIndex);
    await collect(stream);
  }
  return engines;
}

describe("data-parallel routing on an external coordinator's published counts", () => {
  it("sends unpinned requests to the engine the counts say is less loaded, and follows a flip", async () => {
    const setup = await start();
    const { client } = setup;
    // Published as paused: the frontend's next request (the probe, to engine 0) wakes the engines through
    // the coordinator, which then publishes them running.
    await publish(
      setup,
      [
        [40, 0],
        [0, 0],
      ],
      false,
    );
    expect(setup.coordinator.events).toContainEqual(expect.objectContaining({ event: "wakeup", engine: 0 }));

    // In-flight counts alone (no counts) would alternate 0, 1, 0, 1, …; engine 0's 40 waiting outweigh them.
    const first = await Promise.all(
      Array.from({ length: 6 }, (_, i) => client.call(chatRequest(`a-${i}`, 20))),
    );
    expect(first.map((s) => s.engineIndex)).toEqual([1, 1, 1, 1, 1, 1]);
    await Promise.all(first.map((s) => collect(s)));

    await publish(setup, [
      [0, 0],
      [0, 40],
    ]);
    const flipped = await Promise.all(
      Array.from({ length: 6 }, (_, i) => client.call(chatRequest(`b-${i}`, 20))),
    );
    expect(flipped.map((s) => s.engineIndex)).toEqual([0, 0, 0, 0, 0, 0]);
    await Promise.all(flipped.map((s) => collect(s)));
  });

  it("rotates the start index, so equal counts spread requests instead of always picking engine 0", async () => {
    const setup = await start();
    const picked: number[] = [];
    for (let round = 0; round < 6; round++) {
      // A fresh publish before each request resets the local bump: only the rotation tells the engines apart.
      await publish(setup, [
        [2, 1],
        [2, 1],
      ]);
      picked.push(...(await oneByOne(setup.client, `tie-${round}`, 1)));
    }
    expect(picked).toEqual([0, 1, 0, 1, 0, 1]);
  });

  it("before the first publish, routes on zero counts as DPLBAsyncMPClient starts (lb_engines = [0, 0, 0.0] each)", async () => {
    // vLLM's coordinator publishes at once after its startup gate (often before a frontend subscribed), then
    // only every 5 s while nothing changes: idle engines can go unpublished for seconds. With the start index
    // and the local bump already at work, a frontend spreads its first requests instead of sending all to 0.
    const setup = await start();
    expect(await oneByOne(setup.client, "early", 4)).toEqual([0, 1, 0, 1]);
    expect(setup.coordinator.events.filter((e) => e.event === "published" && e.counts !== null)).toEqual([]);
  });

  it("bumps the picked engine's waiting count locally until the next publish", async () => {
    const setup = await start();
    await publish(setup, [
      [0, 0],
      [3, 0],
    ]);
    // No publish in between: engine 0's local count climbs 1, 2, 3, then ties and the rotation alternate.
    expect(await oneByOne(setup.client, "bump", 6)).toEqual([0, 0, 0, 1, 0, 1]);
    // The next publish replaces the bumped counts (kept, engine 0 at 4 and engine 1 at 5 would give 0, 1, 0).
    await publish(setup, [
      [0, 0],
      [3, 0],
    ]);
    expect(await oneByOne(setup.client, "reset", 3)).toEqual([0, 0, 0]);
  });

  it("weighs waiting requests on a KV-bound engine more (kv_cache_usage above 50%)", async () => {
    const setup = await start();
    // Engine 0: 2 waiting at full KV usage scores 2 + 2 * 6 * 0.5 = 8; engine 1: 3 waiting at no usage scores 3.
    await publish(setup, [
      [2, 0, 1.0],
      [3, 0, 0.0],
    ]);
    expect(await oneByOne(setup.client, "kv", 1)).toEqual([1]);
  });

  it("honours a pinned dataParallelRank whatever the counts say", async () => {
    const setup = await start();
    await publish(setup, [
      [50, 0],
      [0, 0],
    ]);
    const pinned = await setup.client.call({ ...chatRequest("pinned", 2), dataParallelRank: 0 });
    expect(pinned.engineIndex).toBe(0);
    await collect(pinned);
    expect(await oneByOne(setup.client, "unpinned", 1)).toEqual([1]);
  });
});

/** Sends batches of `size` concurrent unpinned requests until one batch's engines satisfy `ok` (bounded). */
async function untilBatch(
  client: EngineCoreClient,
  tag: string,
  ok: (engines: number[]) => boolean,
  size = 4,
  timeoutMs = 15_000,
): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (let round = 0; ; round++) {
    const streams = await Promise.all(
      Array.from({ length: size }, (_, i) => client.call(chatRequest(`${tag}-${round}-${i}`, 10))),
    );
    await Promise.all(streams.map((s) => collect(s)));
    const engines = streams.map((s) => s.engineIndex);
    if (ok(engines)) return engines;
    if (Date.now() > deadline)
      throw new Error(`no batch as expected within ${timeoutMs} ms; last: ${engines}`);
  }
}

describe("data-parallel routing on the counts a coordinator collects from the engines", () => {
  it("routes away from the engine other frontends loaded, and back once its load clears", async () => {
    // The whole DPCoordinator path: engines push their request counts to the coordinator's PULL
    // (EngineCoreProc._maybe_publish_request_counts), the coordinator publishes them every 100 ms while they
    // change. No log_stats: the frontend sees engine 1's load only through the coordinator.
    const address = ipcAddress("coord");
    const backPublish = ipcAddress("coord-in");
    const backOutput = ipcAddress("coord-out");
    const inputAddress = ipcAddress("in");
    const outputAddress = ipcAddress("out");
    const coordinator = await startMockCoordinator({
      address,
      engineCount: 2,
      engineSide: { publishAddress: backPublish, outputAddress: backOutput },
    });
    cleanups.push(() => coordinator.stop());
    const engine = await startMockEngine({
      mode: "bootstrapped",
      inputAddress,
      outputAddress,
      coordinatorInput: backPublish,
      coordinatorOutput: backOutput,
      engineIndices: [0, 1],
      stepMs: 2,
      extraWaiting: 50,
      extraWaitingMs: 5_000,
      extraWaitingEngines: [1],
    });
    cleanups.push(() => engine.stop());
    const client = await EngineCoreClient.connect({
      transport: {
        mode: "bootstrapped",
        inputAddress,
        outputAddress,
        engineCount: 2,
        readyTimeoutMs: 20_000,
      },
      coordinator: { mode: "external", address },
    });
    cleanups.push(() => client.shutdown());
    await coordinator.waitForEvent((e) => e.event === "engines-ready");
    await coordinator.waitForEvent((e) => e.event === "published" && e.counts?.[1]?.[0] === 50);

    // In-flight counts alone would spread each batch over both engines.
    expect(await untilBatch(client, "busy", (engines) => engines.every((e) => e === 0))).toEqual([
      0, 0, 0, 0,
    ]);
    expect(client.schedulerStats(1)).toBeUndefined(); // nothing but the coordinator told of engine 1's load

    const loaded = coordinator.events.findIndex((e) => e.event === "published" && e.counts?.[1]?.[0] === 50);
    await coordinator.waitForEvent(
      (e) => e.event === "published" && e.counts?.[1]?.[0] === 0 && coordinator.events.indexOf(e) > loaded,
    );
    const cleared = await untilBatch(client, "free", (engines) => engines.includes(1));
    expect(cleared).toContain(1);
  });
});

describe("the in-process coordinator (handshake-owner) with mock engines that join it", () => {
  it("passes the startup gate, serves requests and takes the engines' count publishes in its stride", async () => {
    // The engines find the coordinator's XPUB / PULL in INIT, subscribe, wait for READY before their handshake
    // READY, and push their request counts to the PULL (vllm/v1/engine/core.py); the in-process coordinator,
    // like the Rust one, keeps only the wave state and ignores those stats-only batches.
    const harness = await connectToMockEngine(
      { engineCount: 2, stepMs: 2 },
      { coordinator: { mode: "inproc" } },
    );
    cleanups.push(() => harness.close());
    for (const engineIndex of [0, 1]) {
      await harness.engine.waitForEvent(
        (e) => e.event === "coordinator-ready" && e.engineIndex === engineIndex,
      );
    }
    const streams = await Promise.all(
      Array.from({ length: 4 }, (_, i) => harness.client.call(chatRequest(`inproc-${i}`, 5))),
    );
    expect(streams.map((s) => s.engineIndex).sort()).toEqual([0, 0, 1, 1]);
    for (const s of streams) expect((await collect(s)).tokens).toHaveLength(5);
    // Counts went to the coordinator while the requests ran; the connection is still healthy afterwards.
    for (const engineIndex of [0, 1]) {
      await harness.engine.waitForEvent(
        (e) =>
          e.event === "coordinator-counts" &&
          e.engineIndex === engineIndex &&
          e.running === 0 &&
          e.waiting === 0,
      );
    }
    const after = await harness.client.call(chatRequest("inproc-after", 2));
    expect((await collect(after)).tokens).toHaveLength(2);
    expect(harness.client.isHealthy).toBe(true);
  });
});
