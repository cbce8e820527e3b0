// The bench's consumer thread: attaches to the product's connection with EngineCoreClient.attach(handle)
// and runs the streams on this thread (neither the caller nor the runtime). Never loads zeromq.
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { EngineCoreClient, EngineCoreOutputStream } from "@vllm-engine-core/client";
import { instrument } from "@vllm-engine-core/metrics";
import {
  type ConsumerContext,
  callRequest,
  monotonicNowMs,
  SampleBuffer,
  serveConsumer,
  streamRequestIds,
  summarize,
} from "@vllm-engine-core/probe";
import type {
  ConsumerRun,
  FromConsumer,
  MemoryUsage,
  SlowReaderPhase,
  ToConsumer,
} from "./consumer-protocol.js";
import { FastWindowRecorder, pooledWindow } from "./fast-window.js";
import { LogHistogram } from "./histogram.js";
import { CREDIT_STEPS, CreditWriter } from "./replay/credit.js";
import { MeasureWindow } from "./window.js";

type Context = ConsumerContext<FromConsumer>;

let runCounter = 0;

/** Memory of this thread's heap (and the process RSS), after a full GC when the process runs with --expose-gc. */
function memoryUsage(): MemoryUsage {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
  };
}

async function openStreams(
  client: EngineCoreClient,
  ids: readonly string[],
  maxTokens: number,
): Promise<EngineCoreOutputStream[]> {
  const streams: EngineCoreOutputStream[] = [];
  // Submissions are round trips to the runtime: keep a bounded number in flight.
  for (let i = 0; i < ids.length; i += 256) {
    const batch = ids.slice(i, i + 256).map((id) => client.call(callRequest(id, maxTokens)));
    streams.push(...(await Promise.all(batch)));
  }
  return streams;
}

async function windowed(
  { client, post }: Context,
  run: Extract<ConsumerRun, { kind: "throughput" | "latency" }>,
): Promise<void> {
  const ids =
    run.kind === "throughput"
      ? streamRequestIds("load", run.streams)
      : streamRequestIds(`${run.kind}-${++runCounter}`, run.streams);
  const credit =
    run.kind === "throughput" && run.creditFile
      ? new CreditWriter(run.creditFile, CREDIT_STEPS * run.streams)
      : undefined;
  let closeWindow: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    closeWindow = resolve;
  });
  const window = new MeasureWindow({
    streams: run.streams,
    warmupMs: run.warmupMs,
    measureMs: run.measureMs,
    onPhase: (phase) => {
      post({ type: "phase", phase });
      if (phase === "done") closeWindow();
    },
  });
  // Throughput reads the clock once per 64 deliveries (and the watchdog every 20 ms): a clock read per
  // output would be a measurable share of the work being measured. Latency needs it per output anyway.
  let measuring = false;
  let sinceTick = 0;
  const tick = () => {
    measuring = window.tick(performance.now());
  };
  const watchdog = setInterval(tick, 20);
  let tokens = 0;
  let outputs = 0;
  let merged = 0;
  const delays = new SampleBuffer(1 << 16);
  const consume = async (stream: EngineCoreOutputStream) => {
    let first = true;
    for await (const output of stream) {
      if (first) {
        first = false;
        window.streamFlowing(performance.now());
      }
      if (output.finishReason != null) return;
      const n = output.newTokenIds.length;
      credit?.add(n);
      if (run.kind === "latency" || ++sinceTick === 64) {
        sinceTick = 0;
        tick();
      }
      if (!measuring) continue;
      tokens += n;
      outputs++;
      if (n > 1) merged++;
      if (run.kind === "latency") delays.add(monotonicNowMs() - stream.lastTimestamp * 1000);
    }
  };
  const metrics = run.kind === "throughput" && run.metrics ? instrument(client) : undefined;
  const streams = await openStreams(client, ids, run.maxTokens);
  const loops = streams.map(consume);
  await closed;
  clearInterval(watchdog);
  await client.abort(ids);
  await Promise.all(loops);
  credit?.close();
  if (metrics !== undefined) {
    await metrics.registry.metrics(); // one scrape: what a Prometheus server would do
    metrics.close();
  }
  if (run.kind === "throughput") {
    post({ type: "throughput", outcome: { tokens, outputs, merged, windowMs: window.durationMs } });
  } else {
    post({ type: "latency", outcome: { delay: summarize(delays.values()), merged } });
  }
}

async function openAndHold(
  { client, post }: Context,
  run: Extract<ConsumerRun, { kind: "open-streams" }>,
): Promise<void> {
  const ids = streamRequestIds(`open-${++runCounter}`, run.streams);
  let flowing = 0;
  let allFlowing: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    allFlowing = resolve;
  });
  const consume = async (stream: EngineCoreOutputStream) => {
    let first = true;
    for await (const output of stream) {
      if (first && ++flowing === run.streams) allFlowing();
      first = false;
      if (output.finishReason != null) return;
    }
  };
  post({ type: "memory", usage: memoryUsage() }); // baseline: attached, no stream open yet
  const loops = (await openStreams(client, ids, run.maxTokens)).map(consume);
  await ready;
  await sleep(run.settleMs);
  post({ type: "memory", usage: memoryUsage() });
  await client.abort(ids);
  await Promise.all(loops);
}

/** Warm-up of the slow-reader run ends once the fast streams' recent delay p90 is below this. */
const SETTLED_P90_MS = 20;

/**
 * One slow reader among fast ones, compared with the same fast streams when every stream is fast:
 * warm-up, baseline window, slow window (the extra stream read once every `slowReadEveryMs`), baseline
 * window again (the second baseline shows drift: other work on the machine, the engine warming up).
 */
async function slowReader(
  { client, post }: Context,
  run: Extract<ConsumerRun, { kind: "slow-reader" }>,
): Promise<void> {
  const ids = streamRequestIds(`slow-${++runCounter}`, run.streams + 1);
  // Allocated before the first memory sample: recording the fast streams costs no memory while measured.
  const before = new FastWindowRecorder(run.streams);
  const lagging = new FastWindowRecorder(run.streams);
  const after = new FastWindowRecorder(run.streams);
  let current: FastWindowRecorder | undefined;
  /** Warm-up: the fast streams' recent delays, to tell when the start-up backlog has drained. */
  const recent = new LogHistogram();
  let warming = false;
  let stop = false;
  let flowing = 0;
  let allFlowing: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    allFlowing = resolve;
  });
  const firstOutput = () => {
    if (++flowing === run.streams + 1) allFlowing();
  };
  const streams = await openStreams(client, ids, run.maxTokens);
  const slow = streams.pop()!;
  const fast = streams.map(async (stream, index) => {
    let streamTokens = 0;
    for await (const output of stream) {
      if (output.finishReason != null || stop) return;
      if (streamTokens === 0) firstOutput();
      const n = output.newTokenIds.length;
      streamTokens += n;
      // Same clock as the latency section: CLOCK_MONOTONIC at read vs the engine's stamp at send.
      if (current !== undefined)
        current.record(index, n, streamTokens, stream.lastTimestamp, monotonicNowMs());
      else if (warming) recent.add(monotonicNowMs() - stream.lastTimestamp * 1000);
    }
  });

  // The extra stream: read as fast as the others, except once every `slowReadEveryMs` in the slow window.
  let slowMode = false;
  let backlogPending = false;
  let wake = new AbortController();
  let slowRead = 0;
  let slowReads = 0;
  let slowBufferedTokens = 0;
  const slowLoop = (async () => {
    let first = true;
    while (!stop) {
      if (slowMode)
        await sleep(run.slowReadEveryMs, undefined, { signal: wake.signal }).catch(() => undefined);
      const r = await slow.next();
      if (r.done || r.value.finishReason != null) return;
      if (first) {
        first = false;
        firstOutput();
      }
      const n = r.value.newTokenIds.length;
      if (backlogPending) {
        // Everything queued for the slow stream when its window closed arrives as one merged delta.
        backlogPending = false;
        slowBufferedTokens = n;
      } else if (slowMode) {
        slowRead += n;
        slowReads++;
      }
    }
  })();

  const samples: MemoryUsage[] = [];
  const baselineSamples: MemoryUsage[] = [];
  // Memory is sampled (after a full GC of this thread) once a second in every window alike, so each
  // phase pays for the same pauses; the window itself opens after the first sample and closes before the last.
  const measure = async (
    recorder: FastWindowRecorder,
    ms: number,
    phase: SlowReaderPhase,
    into: MemoryUsage[],
  ) => {
    post({ type: "phase", phase });
    into.push(memoryUsage());
    const sampler = setInterval(() => into.push(memoryUsage()), 1000);
    recorder.startedAt = performance.now();
    current = recorder;
    await sleep(ms);
    current = undefined;
    recorder.endedAt = performance.now();
    clearInterval(sampler);
    into.push(memoryUsage());
  };

  await ready;
  // At full load the start (JIT, first GCs) leaves a backlog that takes a while to drain; a window opened
  // on top of it measures the start, not the slow reader. So the warm-up lasts at least `warmupMs` and
  // until the delay p90 over the last 250 ms is below SETTLED_P90_MS, at most `maxWarmupMs`.
  const warmStart = performance.now();
  warming = true;
  // The windows' memory sampling (full GCs) starts here too: the first, costlier ones fall in the warm-up.
  const warmSampler = setInterval(memoryUsage, 1000);
  memoryUsage();
  await sleep(run.warmupMs);
  let settled = false;
  while (!settled && performance.now() - warmStart < run.maxWarmupMs) {
    recent.reset();
    await sleep(250);
    settled = recent.count > 0 && recent.percentile(90) < SETTLED_P90_MS;
  }
  warming = false;
  clearInterval(warmSampler);
  const warmup = { ms: performance.now() - warmStart, settled, minMs: run.warmupMs, maxMs: run.maxWarmupMs };
  await measure(before, run.baselineMs, "baseline-before", baselineSamples);
  slowMode = true;
  await measure(lagging, run.durationMs, "slow", samples); // the last sample still holds the backlog
  slowMode = false;
  backlogPending = true;
  wake.abort();
  wake = new AbortController();
  await measure(after, run.baselineMs, "baseline-after", baselineSamples);
  post({ type: "phase", phase: "slow-reader-done" });

  stop = true;
  await client.abort(ids);
  await Promise.all([...fast, slowLoop]);
  post({
    type: "slow-reader",
    outcome: {
      samples,
      baselineSamples,
      slowBufferedTokens,
      slowTokens: slowRead + slowBufferedTokens,
      slowReads,
      fastTokens: lagging.tokens,
      warmup,
      fast: {
        baselineBefore: pooledWindow([before]),
        slow: pooledWindow([lagging]),
        baselineAfter: pooledWindow([after]),
        baseline: pooledWindow([before, after]),
      },
    },
  });
}

await serveConsumer<ToConsumer, FromConsumer>(async ({ run }, context) => {
  if (run.kind === "throughput" || run.kind === "latency") await windowed(context, run);
  else if (run.kind === "open-streams") await openAndHold(context, run);
  else await slowReader(context, run);
});
