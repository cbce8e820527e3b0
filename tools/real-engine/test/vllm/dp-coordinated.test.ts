// Coordinated (MoE) data parallelism with vLLM's real DPEngineCoreProc ranks and our client as the
// in-process DP coordinator: request waves (the client starts a wave with START_DP_WAVE; the ranks finish it
// together through their all-reduce every 32 steps; the next request starts the next wave), the idle rank
// joining a wave with dummy batches, and pause/resume across ranks with requests in flight (vLLM's pause
// modes: `EngineCoreProc.pause_scheduler` and `DPEngineCoreProc._pause_complete` / `resume_scheduler` in
// vllm/v1/engine/core.py). What the ranks do is read from their DEBUG log.
import { type EngineCoreClient, type EngineCoreOutput, FinishReason } from "@vllm-engine-core/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  connectToRealEngine,
  freePort,
  modelDirs,
  type RealEngine,
  startRealEngine,
} from "../../src/index.ts";
import { collect as collectStream, kit, title } from "./tier.ts";

interface Outcome {
  readonly tokenIds: number[];
  readonly finishReason: number | null;
  readonly engineIndex: number;
}

/** The stream read to its end, with the rank that served it. */
async function collect(stream: AsyncIterable<EngineCoreOutput> & { engineIndex: number }): Promise<Outcome> {
  const { tokenIds, finishReason } = await collectStream(stream);
  return { tokenIds, finishReason, engineIndex: stream.engineIndex };
}

const STEP_MS = 10;

describe.skipIf(!kit)(
  title("real engine, coordinated MoE data parallelism (DP 2, in-process coordinator)"),
  () => {
    let engine: RealEngine | null = null;
    let client: EngineCoreClient | null = null;
    beforeAll(async () => {
      if (!kit) return;
      engine = startRealEngine({
        kit,
        port: await freePort(),
        modelDir: modelDirs.moe,
        dataParallelSize: 2,
        maxModelLen: 1024,
        executor: { stepMs: STEP_MS, logRequests: true },
        // The wave and pause transitions are DEBUG lines of DPEngineCoreProc.
        env: { VLLM_LOGGING_LEVEL: "DEBUG" },
      });
      client = await connectToRealEngine(engine, { config: { coordinator: { mode: "inproc" } } });
    });
    afterAll(async () => {
      await client?.shutdown().catch(() => {});
      await engine?.stop();
    });
    const use = () => {
      if (!client || !engine) throw new Error("no engine");
      return { client, engine };
    };
    /** Log lines after `from` (an index into logLines) that match `pattern`. */
    const linesSince = (from: number, pattern: RegExp) =>
      use()
        .engine.logLines.slice(from)
        .filter((line) => pattern.test(line));
    /**
     * Waits until `n` lines after `from` match. The ranks share one stdout and vLLM writes its
     * `(EngineCore_DPn pid=…)` prefix apart from the message, so under load a prefix can land on another
     * rank's line: the scenarios tell the ranks apart by what only one rank can log, not by the prefix.
     */
    const waitForLines = async (from: number, pattern: RegExp, n: number, timeoutMs = 30_000) => {
      const deadline = performance.now() + timeoutMs;
      while (linesSince(from, pattern).length < n) {
        if (performance.now() > deadline) {
          throw new Error(
            `${n} log lines matching ${pattern} expected, got ${linesSince(from, pattern).length}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return linesSince(from, pattern);
    };
    // A failed pause scenario must not leave the ranks paused for the next one.
    afterEach(async () => {
      if (!client) return;
      if (await client.isSchedulerPaused({ timeoutMs: 30_000 }).catch(() => false)) {
        await client.resumeScheduler({ timeoutMs: 30_000 }).catch(() => {});
      }
    });

    it("waves: a request pinned to one rank starts a wave the idle rank joins; the next request starts the next wave", async () => {
      const { client, engine } = use();
      // Wave 0: only rank 0 has work; the client's START_DP_WAVE wakes rank 1, which steps dummy batches.
      const first = await collect(
        await client.call({
          requestId: "wave0-rank0",
          promptTokenIds: [1, 2, 3],
          dataParallelRank: 0,
          samplingParams: { maxTokens: 3, extraArgs: { scripted_token_ids: [11, 12, 13] } },
        }),
      );
      expect(first).toEqual({ tokenIds: [11, 12, 13], finishReason: FinishReason.LENGTH, engineIndex: 0 });
      // Only a rank woken by START_DP_WAVE logs this, and the client's START_DP_WAVE excludes rank 0 (which
      // got the request): exactly one line, rank 1's.
      expect(await waitForLines(0, /EngineCore starting idle loop for wave 0\./, 1)).toHaveLength(1);
      // Rank 0 (only rank 0 logs it) reports the wave's end to our coordinator once the all-reduce finds no
      // work on any rank.
      await waitForLines(0, /Wave 0 finished, pausing engine loop\./, 1);
      expect(linesSince(0, /model-free executor: request wave0-rank0 added/)).toHaveLength(1);

      // Wave 1: this time rank 1 has the work and rank 0 idles along.
      const mark = engine.logLines.length;
      const second = await collect(
        await client.call({
          requestId: "wave1-rank1",
          promptTokenIds: [4, 5, 6],
          dataParallelRank: 1,
          samplingParams: { maxTokens: 3, extraArgs: { scripted_token_ids: [21, 22, 23] } },
        }),
      );
      expect(second).toEqual({ tokenIds: [21, 22, 23], finishReason: FinishReason.LENGTH, engineIndex: 1 });
      // Rank 0 is the idle one now (START_DP_WAVE for wave 1 excludes rank 1).
      expect(await waitForLines(mark, /EngineCore starting idle loop for wave 1\./, 1)).toHaveLength(1);
      await waitForLines(mark, /Wave 1 finished, pausing engine loop\./, 1);
      expect(linesSince(mark, /model-free executor: request wave1-rank1 added/)).toHaveLength(1);
      expect(linesSince(0, /starting idle loop for wave/)).toHaveLength(2);
      // The ranks never disagreed about the wave: no rank saw a request of a finished wave (which would make
      // it ask the coordinator to start the next one itself) and no error was logged.
      expect(linesSince(0, /ERROR|Traceback/)).toEqual([]);
    });

    /** Starts a long request on each rank, waits until both produced a token; `tokens` counts live. */
    async function inFlightOnBothRanks(prefix: string, maxTokens: number) {
      const { client } = use();
      const started = [0, 1].map(async (rank) => {
        const stream = await client.call({
          requestId: `${prefix}-${rank}`,
          promptTokenIds: [60 + rank, 61, 62],
          dataParallelRank: rank,
          samplingParams: { maxTokens },
        });
        const live = { tokens: 0, done: null as unknown as Promise<Outcome> };
        let resolveFirst = () => {};
        const first = new Promise<void>((resolve) => {
          resolveFirst = resolve;
        });
        live.done = (async () => {
          const tokenIds: number[] = [];
          let finishReason: number | null = null;
          for await (const o of stream) {
            tokenIds.push(...o.newTokenIds);
            live.tokens = tokenIds.length;
            finishReason = o.finishReason;
            if (tokenIds.length > 0) resolveFirst();
          }
          resolveFirst();
          return { tokenIds, finishReason, engineIndex: stream.engineIndex };
        })();
        await first;
        return live;
      });
      return Promise.all(started);
    }

    /** Resolves after `ms` of no matching log line (a window in which a frozen engine must stay frozen). */
    const quietFor = (pattern: RegExp, ms: number) =>
      use()
        .engine.waitForLog(pattern, ms)
        .then(
          (line) => expect.fail(`unexpected engine log line: ${line}`),
          (e: unknown) => expect(e).toMatchObject({ code: "REAL_ENGINE_LOG_TIMEOUT" }),
        );

    it('pause "abort" with requests in flight on both ranks: they end with ABORT; a request sent while paused waits for resume', async () => {
      const { client, engine } = use();
      const inFlight = await inFlightOnBothRanks("pause-abort", 2000);
      const mark = engine.logLines.length;
      await client.pauseScheduler("abort", true, { timeoutMs: 60_000 });
      const ended = await Promise.all(inFlight.map((r) => r.done));
      for (const r of ended) {
        expect(r.finishReason).toBe(FinishReason.ABORT);
        expect(r.tokenIds.length).toBeGreaterThan(0);
        expect(r.tokenIds.length).toBeLessThan(2000);
      }
      // The two-phase DP pause: both ranks agreed through the all-reduce.
      await waitForLines(mark, /DP pause consensus reached/, 2);
      expect(await client.isSchedulerPaused()).toBe(true);

      // A request sent while paused is queued by the rank (and the client's START_DP_WAVE is ignored) …
      let finished = false;
      const queued = client
        .call({
          requestId: "while-paused",
          promptTokenIds: [70, 71],
          dataParallelRank: 1,
          samplingParams: { maxTokens: 2, extraArgs: { scripted_token_ids: [80, 81] } },
        })
        .then(collect)
        .then((r) => {
          finished = true;
          return r;
        });
      await quietFor(/model-free executor: request while-paused added/, 1_000);
      expect(finished).toBe(false);
      // … and runs after resume (a collective: every rank must resume).
      await client.resumeScheduler({ timeoutMs: 60_000 });
      expect(await queued).toEqual({ tokenIds: [80, 81], finishReason: FinishReason.LENGTH, engineIndex: 1 });
      expect(await client.isSchedulerPaused()).toBe(false);
      expect(linesSince(mark, /ERROR|Traceback/)).toEqual([]);
    });

    it('pause "wait": in-flight requests finish before the pause completes', async () => {
      const { client } = use();
      const inFlight = await inFlightOnBothRanks("pause-wait", 60);
      const endedAt: number[] = [];
      const done = inFlight.map((r) =>
        r.done.then((o) => {
          endedAt.push(performance.now());
          return o;
        }),
      );
      await client.pauseScheduler("wait", true, { timeoutMs: 60_000 });
      const pausedAt = performance.now();
      expect(endedAt).toHaveLength(2);
      for (const at of endedAt) expect(at).toBeLessThanOrEqual(pausedAt);
      for (const r of await Promise.all(done)) {
        expect(r.finishReason).toBe(FinishReason.LENGTH);
        expect(r.tokenIds).toHaveLength(60);
      }
      expect(await client.isSchedulerPaused()).toBe(true);
      await client.resumeScheduler({ timeoutMs: 60_000 });
      expect(await client.isSchedulerPaused()).toBe(false);
    });

    it('pause "keep": in-flight requests are frozen, then resume where they stopped', async () => {
      const { client } = use();
      const inFlight = await inFlightOnBothRanks("pause-keep", 80);
      await client.pauseScheduler("keep", true, { timeoutMs: 60_000 });
      expect(await client.isSchedulerPaused()).toBe(true);
      // Frozen: for a second (100 steps of 10 ms, more than the 80 tokens) neither request moves.
      const frozenAt = inFlight.map((r) => r.tokens);
      expect(frozenAt.every((n) => n > 0 && n < 80)).toBe(true);
      await quietFor(/request pause-keep-\d finished/, 1_000);
      expect(inFlight.map((r) => r.tokens)).toEqual(frozenAt);
      await client.resumeScheduler({ timeoutMs: 60_000 });
      for (const [rank, r] of (await Promise.all(inFlight.map((x) => x.done))).entries()) {
        expect(r).toMatchObject({ finishReason: FinishReason.LENGTH, engineIndex: rank });
        expect(r.tokenIds).toHaveLength(80);
      }
    });
  },
);
