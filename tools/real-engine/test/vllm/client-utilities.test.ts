// Every typed utility of our client (packages/client README, "Utilities") against vLLM's real engine core
// (vllm/v1/engine/core.py EngineCore / EngineCoreProc at the pin), with the model-free executor's worker
// standing in for the model: LoRA ids tracked, sleep/wake recorded. Plus the engine's death: calls made
// 0-100 ms after a SIGKILL of the engine's process group must all settle with ENGINE_DEAD.
// Two engines, started together in beforeAll (start-up dominates this file's time).
import {
  type EngineCoreClient,
  type EngineCoreOutput,
  EngineDeadError,
  FinishReason,
  type SchedulerStats,
  UtilityCallError,
} from "@vllm-engine-core/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectToRealEngine, freePort, type RealEngine, startRealEngine } from "../../src/index.ts";
import { collect, kit, title } from "./tier.ts";

/** Resolves with the first output that carries tokens (the request is running on the engine). */
async function firstToken(iterator: AsyncIterator<EngineCoreOutput>): Promise<EngineCoreOutput> {
  for (;;) {
    const next = await iterator.next();
    if (next.done) throw new Error("stream ended before its first token");
    if (next.value.newTokenIds.length > 0) return next.value;
  }
}

async function rest(iterator: AsyncIterator<EngineCoreOutput>, first: EngineCoreOutput) {
  const outputs = [first];
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    outputs.push(next.value);
  }
  return {
    tokenIds: outputs.flatMap((o) => o.newTokenIds),
    finishReason: outputs[outputs.length - 1]?.finishReason ?? null,
  };
}

const STEP_MS = 10;

describe.skipIf(!kit)(title("client utilities and engine death against vLLM's real engine core"), () => {
  const state: {
    lora: RealEngine | null;
    client: EngineCoreClient | null;
    doomed: RealEngine | null;
    doomedClient: EngineCoreClient | null;
  } = { lora: null, client: null, doomed: null, doomedClient: null };
  const stats: SchedulerStats[] = [];

  beforeAll(async () => {
    if (!kit) return;
    // LoRA needs vLLM's LoRA config on the engine (the scheduler's max_loras) and a worker that
    // tracks adapters (the model-free worker does, as vLLM's LRU worker manager).
    state.lora = startRealEngine({
      kit,
      port: await freePort(),
      maxModelLen: 512,
      extraFlags: ["--enable-lora", "--max-loras", "2", "--max-lora-rank", "8", "--max-cpu-loras", "3"],
      executor: { stepMs: STEP_MS, logRequests: true },
    });
    state.doomed = startRealEngine({
      kit,
      port: await freePort(),
      maxModelLen: 512,
      executor: { stepMs: 5 },
    });
    [state.client, state.doomedClient] = await Promise.all([
      connectToRealEngine(state.lora),
      connectToRealEngine(state.doomed),
    ]);
    state.client.onSchedulerStats((_engine, s) => stats.push(s));
  });
  afterAll(async () => {
    await state.client?.shutdown().catch(() => {});
    await state.doomedClient?.shutdown().catch(() => {});
    await Promise.all([state.lora?.stop(), state.doomed?.stop()]);
  });
  const client = () => {
    if (!state.client) throw new Error("no client");
    return state.client;
  };
  const engine = () => {
    if (!state.lora) throw new Error("no engine");
    return state.lora;
  };

  it("getSupportedTasks, reset utilities, executeDummyBatch, profile, weight version: the engine's real answers", async () => {
    const c = client();
    expect(await c.getSupportedTasks()).toEqual(["generate"]);
    expect(await c.resetPrefixCache()).toBe(true);
    expect(await c.resetPrefixCache(true, true)).toBe(true);
    await expect(c.resetMmCache()).resolves.toBeUndefined();
    await expect(c.resetEncoderCache()).resolves.toBeUndefined();
    await expect(c.executeDummyBatch()).resolves.toBeUndefined();
    await expect(c.startProfile("tier")).resolves.toBeUndefined();
    await expect(c.stopProfile("tier")).resolves.toBeUndefined();
    // EngineCore starts at weight version "" unless --weight-version sets one (vllm/v1/engine/core.py).
    const initial = await c.getWeightVersion();
    expect(typeof initial).toBe("string");
    await c.setWeightVersion("v-tier-2");
    expect(await c.getWeightVersion()).toBe("v-tier-2");
    // collective_rpc runs a worker method on every worker (one here) and returns their results.
    expect(await c.collectiveRpc("get_supported_tasks")).toEqual([["generate"]]);
  });

  it("a utility the model-free worker lacks fails with UtilityCallError carrying vLLM's error text", async () => {
    const c = client();
    // Executor.save_sharded_state -> collective_rpc -> run_method: getattr fails (vllm/v1/serial_utils.py).
    const saved = await c.saveShardedState("/tmp/never-written").catch((e: unknown) => e);
    expect(saved).toBeInstanceOf(UtilityCallError);
    expect((saved as UtilityCallError).method).toBe("save_sharded_state");
    expect((saved as UtilityCallError).failureMessage).toBe(
      "Call to save_sharded_state method failed: Method 'save_sharded_state' is not implemented.",
    );
    const rpc = await c.collectiveRpc("no_such_worker_method").catch((e: unknown) => e);
    expect(rpc).toBeInstanceOf(UtilityCallError);
    expect((rpc as UtilityCallError).failureMessage).toBe(
      "Call to collective_rpc method failed: Method 'no_such_worker_method' is not implemented.",
    );
    // The engine is still serving.
    expect(await c.getSupportedTasks()).toEqual(["generate"]);
  });

  it("LoRA: add, list, pin, a request with a LoRA (seen by the worker), remove", async () => {
    const c = client();
    expect(await c.listLoras()).toEqual([]);
    expect(await c.addLora({ loraName: "alpha", loraIntId: 1, loraPath: "/adapters/alpha" })).toBe(true);
    expect(await c.addLora({ loraName: "beta", loraIntId: 2, loraPath: "/adapters/beta" })).toBe(true);
    expect(await c.listLoras()).toEqual([1, 2]);
    expect(await c.pinLora(1)).toBe(true);
    const unknownPin = await c.pinLora(42).catch((e: unknown) => e);
    expect(unknownPin).toBeInstanceOf(UtilityCallError);
    expect((unknownPin as UtilityCallError).failureMessage).toContain(
      "Pinning failed. LoRA 42 is not registered.",
    );

    // A request with a LoRA the worker has not seen: registered when scheduled, as vLLM loads it then.
    const stream = await c.call({
      requestId: "lora-request",
      promptTokenIds: [11, 12, 13],
      samplingParams: { maxTokens: 8, extraArgs: { scripted_token_ids: [5, 6, 7, 8, 9, 10, 11, 12] } },
      loraRequest: { loraName: "gamma", loraIntId: 3, loraPath: "/adapters/gamma" },
    });
    const got = await collect(stream);
    expect(got.tokenIds).toEqual([5, 6, 7, 8, 9, 10, 11, 12]);
    expect(got.finishReason).toBe(FinishReason.LENGTH);
    await engine().waitForLog(
      /request lora-request added \(3 prompt tokens, script of 8 ids, LoRA 3\)/,
      10_000,
    );
    // (SchedulerStats.running_lora_adapters is filled by vLLM's frontend output processor, not the engine:
    // LoRARequestStates in vllm/v1/metrics/stats.py; the engine's stats carry it empty.)
    expect(stats.every((s) => Object.keys(s.runningLoraAdapters).length === 0)).toBe(true);
    expect(await c.listLoras()).toEqual([1, 2, 3]);

    expect(await c.removeLora(2)).toBe(true);
    expect(await c.removeLora(2)).toBe(false);
    expect(await c.listLoras()).toEqual([1, 3]);
    expect(await c.removeLora(1)).toBe(true);
    expect(await c.removeLora(3)).toBe(true);
    expect(await c.listLoras()).toEqual([]);
  });

  it("sleep level 1 (abort mode) aborts the running request, sleeps the executor; wakeUp resumes", async () => {
    const c = client();
    expect(await c.isSleeping()).toBe(false);
    const stream = await c.call({
      requestId: "asleep-aborted",
      promptTokenIds: [21, 22, 23],
      samplingParams: { maxTokens: 400 },
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await firstToken(iterator);
    await c.sleep(1, "abort");
    const aborted = await rest(iterator, first);
    expect(aborted.finishReason).toBe(FinishReason.ABORT); // the engine's own abort output
    expect(aborted.tokenIds.length).toBeLessThan(400);
    expect(await c.isSleeping()).toBe(true);
    expect(await c.isSchedulerPaused()).toBe(true);
    await engine().waitForLog(/model-free executor: sleep\(level=1\)/, 10_000);

    // A request sent while asleep waits; it runs once the engine wakes up.
    const queued = collect(
      await c.call({
        requestId: "after-wake",
        promptTokenIds: [24, 25],
        samplingParams: { maxTokens: 3, extraArgs: { scripted_token_ids: [1, 2, 3] } },
      }),
    );
    await c.wakeUp();
    await engine().waitForLog(/model-free executor: wake_up\(tags=None\)/, 10_000);
    expect(await c.isSleeping()).toBe(false);
    const { tokenIds, finishReason } = await queued;
    expect({ tokenIds, finishReason }).toEqual({ tokenIds: [1, 2, 3], finishReason: FinishReason.LENGTH });
  });

  it("sleep level 0 pauses scheduling only; wakeUp(['scheduling']) resumes it", async () => {
    const c = client();
    await c.sleep(0);
    expect(await c.isSleeping()).toBe(true);
    await c.wakeUp(["scheduling"]);
    expect(await c.isSleeping()).toBe(false);
    expect(await c.isSchedulerPaused()).toBe(false);
  });

  it("pauseScheduler('abort'): the engine aborts in-flight requests; new ones wait for resumeScheduler", async () => {
    const c = client();
    const stream = await c.call({
      requestId: "pause-abort",
      promptTokenIds: [31, 32],
      samplingParams: { maxTokens: 400 },
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await firstToken(iterator);
    await c.pauseScheduler("abort");
    const got = await rest(iterator, first);
    expect(got.finishReason).toBe(FinishReason.ABORT);
    expect(await c.isSchedulerPaused()).toBe(true);
    const queued = collect(
      await c.call({
        requestId: "pause-abort-queued",
        promptTokenIds: [33],
        samplingParams: { maxTokens: 2, extraArgs: { scripted_token_ids: [70, 71] } },
      }),
    );
    await c.resumeScheduler();
    expect(await c.isSchedulerPaused()).toBe(false);
    const { tokenIds, finishReason } = await queued;
    expect({ tokenIds, finishReason }).toEqual({ tokenIds: [70, 71], finishReason: FinishReason.LENGTH });
  });

  it("pauseScheduler('wait') answers once the in-flight request has finished, all its tokens produced", async () => {
    const c = client();
    const scripted = Array.from({ length: 20 }, (_, i) => 300 + i);
    const stream = await c.call({
      requestId: "pause-wait",
      promptTokenIds: [41, 42],
      samplingParams: { maxTokens: 20, extraArgs: { scripted_token_ids: scripted } },
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await firstToken(iterator);
    const finishedFirst: string[] = [];
    const pause = c.pauseScheduler("wait", false).then(() => finishedFirst.push("pause"));
    const got = await rest(iterator, first);
    finishedFirst.push("stream");
    await pause;
    expect(got).toEqual({ tokenIds: scripted, finishReason: FinishReason.LENGTH });
    expect(finishedFirst).toEqual(["stream", "pause"]);
    expect(await c.isSchedulerPaused()).toBe(true);
    await c.resumeScheduler();
    expect(await c.isSchedulerPaused()).toBe(false);
  });

  it("pauseScheduler('keep') freezes the in-flight request without aborting it; it completes after resume", async () => {
    const c = client();
    const scripted = Array.from({ length: 60 }, (_, i) => 400 + i);
    const stream = await c.call({
      requestId: "pause-keep",
      promptTokenIds: [51, 52],
      samplingParams: { maxTokens: 60, extraArgs: { scripted_token_ids: scripted } },
    });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await firstToken(iterator);
    const received = [...first.newTokenIds];
    let finishReason: number | null = null;
    const reader = (async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        received.push(...next.value.newTokenIds);
        finishReason = next.value.finishReason ?? finishReason;
      }
    })();
    await c.pauseScheduler("keep");
    expect(await c.isSchedulerPaused()).toBe(true);
    // "keep" answers once the engine's output queue is empty, so every token stepped before the pause
    // came first on the same socket. While paused the engine skips step(): over 30 steps' time nothing
    // more arrives (a window: there is no event for "nothing happened").
    const atPause = received.length;
    await new Promise((resolve) => setTimeout(resolve, 30 * STEP_MS));
    expect(received.length).toBe(atPause);
    expect(atPause).toBeLessThan(60);
    expect(finishReason).toBeNull();
    await c.resumeScheduler();
    await reader;
    expect(received).toEqual(scripted);
    expect(finishReason).toBe(FinishReason.LENGTH);
  });

  it("calls made 0-100 ms after the engine's SIGKILL all settle with ENGINE_DEAD", async () => {
    const c = state.doomedClient;
    const doomed = state.doomed;
    if (!c || !doomed) throw new Error("no engine");
    // The engine serves before it dies.
    const warm = await collect(
      await c.call({ requestId: "warm", promptTokenIds: [1, 2], samplingParams: { maxTokens: 2 } }),
    );
    expect(warm.tokenIds).toHaveLength(2);
    const live = await c.call({
      requestId: "live-at-death",
      promptTokenIds: [3, 4],
      samplingParams: { maxTokens: 100_000 },
    });
    const liveSettled = collect(live).then(
      () => "resolved",
      (e: unknown) => e,
    );

    const BOUND_MS = 15_000;
    const settle = async (label: string, run: () => Promise<unknown>) => {
      const started = performance.now();
      const outcome = await run().then(
        () => "resolved",
        (e: unknown) => e,
      );
      return { label, outcome, ms: performance.now() - started };
    };
    const request = (id: string) => () =>
      c.call({ requestId: id, promptTokenIds: [5, 6, 7], samplingParams: { maxTokens: 50 } }).then(collect);
    const after = (ms: number, label: string, run: () => Promise<unknown>) =>
      new Promise<ReturnType<typeof settle>>((resolve) => setTimeout(() => resolve(settle(label, run)), ms));

    doomed.kill("SIGKILL");
    const killedAt = performance.now();
    const offsets = [0, 5, 10, 20, 40, 60, 100];
    const all = await Promise.all([
      settle("sync-0", request("at-0-sync")),
      ...offsets.map((ms) => after(ms, `call-${ms}`, request(`at-${ms}`))),
      ...Array.from({ length: 5 }, (_, i) => settle(`concurrent-${i}`, request(`concurrent-${i}`))),
      after(10, "utility-10", () => c.isSleeping()),
      after(60, "utility-60", () => c.getSupportedTasks()),
    ]);
    const liveOutcome = await liveSettled;
    for (const { label, outcome, ms } of all) {
      expect(outcome, label).toBeInstanceOf(EngineDeadError);
      expect(ms, label).toBeLessThan(BOUND_MS);
    }
    expect(liveOutcome).toBeInstanceOf(EngineDeadError);
    const slowest = Math.max(...all.map((r) => r.ms));
    console.log(
      `engine death: ${all.length} calls settled with ENGINE_DEAD, slowest ${slowest.toFixed(0)} ms, all within ${(
        performance.now() - killedAt
      ).toFixed(0)} ms of the kill`,
    );
    expect((await doomed.exited).signal).toBe("SIGKILL");
  });
});
