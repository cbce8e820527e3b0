// Scheduler stats and per-request timings, against the mock engine in a child process: the
// mock plays vLLM's log_stats (Scheduler.make_stats every step, QUEUED/SCHEDULED events on outputs).
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import type { SchedulerStats } from "../src/index.js";
import { chatRequest, collect, connectToMockEngine, fixture, type Harness } from "./helpers.js";

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("scheduler stats per engine", () => {
  it("exposes every engine's stats riding on output batches, decoded in full", async () => {
    harness = await connectToMockEngine({ engineCount: 2, logStats: true, stepMs: 5 });
    const { client } = harness;
    expect(client.schedulerStats(0)).toBeUndefined();
    const seen: { engineIndex: number; stats: SchedulerStats }[] = [];
    const unsubscribe = client.onSchedulerStats((engineIndex, stats) => seen.push({ engineIndex, stats }));
    const requests = [0, 1, 2, 3].map((i) => ({ ...chatRequest(`s-${i}`, 6), dataParallelRank: i % 2 }));
    const streams = await Promise.all(requests.map((r) => client.call(r)));
    await Promise.all(streams.map((s) => collect(s)));
    await until(() => [0, 1].every((e) => client.schedulerStats(e)?.numRunningReqs === 0), "idle stats");
    for (const engineIndex of [0, 1]) {
      const mine = seen.filter((s) => s.engineIndex === engineIndex).map((s) => s.stats);
      // One per step: 6 tokens per request, one token per step.
      expect(mine.length).toBeGreaterThanOrEqual(6);
      expect(Math.max(...mine.map((s) => s.numRunningReqs))).toBe(2);
      // PrefixCacheStats.record for each admitted request: its prompt tokens were queried, none hit.
      const queries = mine.reduce((sum, s) => sum + s.prefixCacheStats.queries, 0);
      const prompts = requests.filter((r) => r.dataParallelRank === engineIndex);
      expect(queries).toBe(prompts.reduce((sum, r) => sum + r.promptTokenIds!.length, 0));
      expect(mine.reduce((sum, s) => sum + s.prefixCacheStats.requests, 0)).toBe(2);
      const latest = client.schedulerStats(engineIndex)!;
      expect(latest).toEqual(mine.at(-1));
      expect(latest).toMatchObject({
        numWaitingReqs: 0,
        numSkippedWaitingReqs: 0,
        kvCacheUsage: 0,
        connectorPrefixCacheStats: null,
        specDecodingStats: null,
        waitingLoraAdapters: {},
        runningLoraAdapters: {},
        iterationDetails: null,
      });
      expect(mine.some((s) => s.kvCacheUsage > 0)).toBe(true);
    }
    unsubscribe();
    const before = seen.length;
    const again = await client.call({ ...chatRequest("after", 2), dataParallelRank: 0 });
    await collect(again);
    expect(seen.length).toBe(before);
  });

  it("gives every thread of a connection each step's stats once, whoever owns the step's outputs", async () => {
    // A second thread on the connection (its own lane, as `serve --api-server-count`): a step's stats reach a
    // thread that owns outputs of it inside that step's frames, and any other thread by the runtime's relay.
    harness = await connectToMockEngine({ logStats: true, stepMs: 5 });
    const { client } = harness;
    const worker = new Worker(fixture("stats-worker.mjs"), {
      workerData: { handle: client.handle },
      // Plain Node resolution (built dist), not the test runner's source condition.
      execArgv: [],
    });
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    const failed = new Promise<never>((_, reject) => worker.once("error", reject));
    const next = <T>(t: string) =>
      Promise.race([
        failed,
        new Promise<T>((resolve) => {
          const on = (m: { t: string }) => {
            if (m.t !== t) return;
            worker.off("message", on);
            resolve(m as T);
          };
          worker.on("message", on);
        }),
      ]);
    try {
      await next("ready");
      const here: { engineIndex: number; stats: SchedulerStats }[] = [];
      client.onSchedulerStats((engineIndex, stats) => here.push({ engineIndex, stats }));
      // Steps whose outputs only this thread owns, then steps with outputs of both threads.
      await collect(await client.call(chatRequest("only-here", 4)));
      const ran = next("ran");
      worker.postMessage({ t: "run", request: chatRequest("there", 3) });
      await Promise.all([client.call(chatRequest("here-too", 5)).then(collect), ran]);
      await until(() => here.at(-1)?.stats.numRunningReqs === 0, "this thread seeing the engine idle");
      const report = next<{ seen: typeof here }>("report");
      worker.postMessage({ t: "report" });
      const there = (await report).seen;
      expect(here.length).toBeGreaterThanOrEqual(4 + 5);
      // The same steps' stats on both threads, in the same order, with the same figures; each once (the
      // prefix-cache queries of the three prompts add up to their tokens, not to a multiple of them).
      expect(there).toEqual(here);
      const queries = here.reduce((sum, s) => sum + s.stats.prefixCacheStats.queries, 0);
      expect(queries).toBe(4 + 4 + 4);
    } finally {
      await worker.terminate();
      await exited;
    }
  });

  it("counts stats-only messages (an engine busy with other frontends' requests)", async () => {
    harness = await connectToMockEngine({
      engineCount: 2,
      logStats: true,
      stepMs: 5,
      extraWaiting: 7,
      extraWaitingEngines: [1],
    });
    const { client } = harness;
    await until(() => client.schedulerStats(1) !== undefined, "engine 1's stats");
    expect(client.schedulerStats(1)).toMatchObject({ numRunningReqs: 0, numWaitingReqs: 7 });
    // Engine 0 has nothing to do: it does not step, so it reports nothing (as vLLM's EngineCore.step).
    expect(client.schedulerStats(0)).toBeUndefined();
  });
});

describe("per-request timings on the stream", () => {
  it("derives vLLM's intervals from the engine's events and batch timestamps when it logs stats", async () => {
    harness = await connectToMockEngine({ logStats: true, stepMs: 20 });
    const { client } = harness;
    const stream = await client.call(chatRequest("t-1", 5));
    expect(stream.timings?.timeToFirstToken).toBeNull();
    const { tokens } = await collect(stream);
    const t = stream.timings!;
    expect(t).toMatchObject({
      requestId: "t-1",
      engineIndex: 0,
      clock: "engine",
      numPromptTokens: 4,
      numGenerationTokens: tokens.length,
      maxTokens: 5,
      finishReason: "length",
      finishedBy: "engine",
      numPreemptions: 0,
      numCachedTokens: 0,
    });
    expect(t.queuedTs).toBeGreaterThan(0);
    expect(t.scheduledTs).toBeGreaterThanOrEqual(t.queuedTs);
    expect(t.firstTokenTs).toBeGreaterThan(t.scheduledTs);
    // One output per step (one token per step), 20 ms apart on the engine's clock.
    expect(t.interTokenLatencies).toHaveLength(4);
    for (const itl of t.interTokenLatencies) expect(itl).toBeGreaterThan(0.015);
    expect(t.decodeTime).toBeCloseTo(t.lastTokenTs - t.firstTokenTs, 9);
    expect(t.decodeTime).toBeCloseTo(
      t.interTokenLatencies.reduce((a, b) => a + b, 0),
      9,
    );
    expect(t.prefillTime).toBeCloseTo(t.firstTokenTs - t.scheduledTs, 9);
    expect(t.inferenceTime).toBeCloseTo(t.lastTokenTs - t.scheduledTs, 9);
    expect(t.queuedTime).toBeCloseTo(t.scheduledTs - t.queuedTs, 9);
    expect(t.meanTimePerOutputToken).toBeCloseTo(t.decodeTime! / 4, 9);
    expect(t.timeToFirstToken).toBeGreaterThan(0.015);
    expect(t.e2eLatency).toBeGreaterThanOrEqual(t.timeToFirstToken!);
    expect(t.e2eLatency).toBeGreaterThan(0.08);
  });

  it("falls back to this thread's clock when the engine sends no events", async () => {
    harness = await connectToMockEngine({ stepMs: 20 });
    const stream = await harness.client.call(chatRequest("t-2", 3));
    await collect(stream);
    const t = stream.timings!;
    expect(t.clock).toBe("local");
    expect(t.queuedTime).toBe(0);
    expect(t.interTokenLatencies).toHaveLength(2);
    expect(t.prefillTime).toBeGreaterThan(0.015);
    expect(t.finishReason).toBe("length");
  });

  it("records a client abort as such, without engine finish timings", async () => {
    harness = await connectToMockEngine({ logStats: true, stepMs: 20 });
    const { client } = harness;
    const stream = await client.call(chatRequest("t-3", 1000));
    await stream.next();
    await client.abort("t-3");
    await collect(stream).catch(() => {});
    expect(stream.timings).toMatchObject({ finishReason: "abort", finishedBy: "client" });
  });
});
