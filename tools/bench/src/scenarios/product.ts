// Scenarios for the product: the caller connects (sockets on the runtime thread), a consumer thread
// attaches with the handle and runs the streams.
import type { EngineCoreClient } from "@vllm-engine-core/client";
import { spinFor, type ThreadMarker, withAttachedConsumer } from "@vllm-engine-core/probe";
import type { SlowReaderPhase } from "../consumer-protocol.js";
import { BenchConsumerThread } from "../consumer-thread.js";
import { averageCpu, slowToBaseline } from "../slow-reader.js";
import type { LatencyResult, OpenStreamsMemory, SlowReaderMemory, ThroughputResult } from "../types.js";
import { CpuWindow, labelThreads } from "./cpu-window.js";
import {
  type EngineSpec,
  engineSpecFor,
  type LoadEngine,
  startLoadEngine,
  type ThroughputOptions,
} from "./load-engine.js";
import { WindowProfile } from "./window-profile.js";

interface Product {
  client: EngineCoreClient;
  consumer: BenchConsumerThread;
  cpu: CpuWindow;
  engine: LoadEngine;
}

async function withProduct<T>(spec: EngineSpec | number, fn: (p: Product) => Promise<T>): Promise<T> {
  const engine = await startLoadEngine(typeof spec === "number" ? { kind: "mock", stepMs: spec } : spec);
  const consumer = new BenchConsumerThread();
  return withAttachedConsumer({ consumer, engine }, async ({ client, markerFd }) => {
    const markers: ThreadMarker[] = markerFd === undefined ? [] : [{ label: "consumer thread", markerFd }];
    const labels = await labelThreads(markers);
    return fn({ client, consumer, engine, cpu: new CpuWindow(engine.pid, process.pid, labels) });
  });
}

const HUGE = 100_000_000;

/** The product with @vllm-engine-core/metrics instrumented on the consuming client (same engine, same run). */
export function productMetricsThroughput(o: ThroughputOptions): Promise<ThroughputResult> {
  return productThroughput({ ...o, metrics: true });
}

export function productThroughput(o: ThroughputOptions & { metrics?: boolean }): Promise<ThroughputResult> {
  return withProduct(engineSpecFor(o), async ({ consumer, cpu, engine }) => {
    const profile = o.profileDir
      ? new WindowProfile(o.profileDir, `product-${o.streams}`, undefined)
      : undefined;
    consumer.onPhase = (phase) => {
      if (phase === "measuring") {
        cpu.start();
        profile?.start();
      }
      if (phase === "done") {
        cpu.stop();
        profile?.stop();
      }
    };
    const run = {
      kind: "throughput" as const,
      ...(o.metrics ? { metrics: true } : {}),
      streams: o.streams,
      maxTokens: HUGE,
      warmupMs: o.warmupMs,
      measureMs: o.measureMs,
    };
    consumer.send({ type: "run", run: engine.creditFile ? { ...run, creditFile: engine.creditFile } : run });
    const { outcome } = await consumer.expect("throughput");
    const profiles = await profile?.result();
    return {
      runner: o.metrics ? "product-metrics" : "product",
      streams: o.streams,
      outputsPerSec: (outcome.tokens * 1000) / outcome.windowMs,
      tokens: outcome.tokens,
      merged: outcome.merged,
      windowMs: outcome.windowMs,
      cpu: cpu.report,
      ...(profiles ? { profile: profiles } : {}),
    };
  });
}

export function productLatency(o: {
  streams: number;
  stepMs: number;
  caller: "idle" | "busy";
  warmupMs: number;
  measureMs: number;
}): Promise<LatencyResult> {
  return withProduct(o.stepMs, async ({ consumer, cpu }) => {
    let warm: () => void = () => undefined;
    const flowing = new Promise<void>((resolve) => {
      warm = resolve;
    });
    consumer.onPhase = (phase) => {
      if (phase === "warmup") warm();
      if (o.caller === "idle" && phase === "measuring") cpu.start();
      if (o.caller === "idle" && phase === "done") cpu.stop();
    };
    consumer.send({
      type: "run",
      run: {
        kind: "latency",
        streams: o.streams,
        maxTokens: HUGE,
        warmupMs: o.warmupMs,
        measureMs: o.measureMs,
      },
    });
    if (o.caller === "busy") {
      await flowing;
      // The caller spins through warm-up and window (its loop cannot even see the consumer's messages).
      cpu.start();
      spinFor(o.warmupMs + o.measureMs + 100);
      cpu.stop();
    }
    const { outcome } = await consumer.expect("latency");
    return {
      runner: "product",
      streams: o.streams,
      caller: o.caller,
      stepMs: o.stepMs,
      ...outcome,
      cpu: cpu.report,
    };
  });
}

export function productOpenStreams(o: {
  streams: number;
  stepMs: number;
  settleMs: number;
}): Promise<OpenStreamsMemory> {
  return withProduct(o.stepMs, async ({ consumer }) => {
    consumer.send({
      type: "run",
      run: { kind: "open-streams", streams: o.streams, maxTokens: HUGE, settleMs: o.settleMs },
    });
    const gc = () => (globalThis as { gc?: () => void }).gc?.();
    const before = await consumer.expect("memory");
    gc();
    const mainBefore = process.memoryUsage();
    const after = await consumer.expect("memory");
    gc();
    const mainAfter = process.memoryUsage();
    return {
      streams: o.streams,
      stepMs: o.stepMs,
      baseline: {
        rss: mainBefore.rss,
        mainHeapUsed: mainBefore.heapUsed,
        consumerHeapUsed: before.usage.heapUsed,
      },
      open: { rss: mainAfter.rss, mainHeapUsed: mainAfter.heapUsed, consumerHeapUsed: after.usage.heapUsed },
    };
  });
}

export function productSlowReader(o: {
  streams: number;
  slowReadEveryMs: number;
  durationMs: number;
  baselineMs: number;
  warmupMs: number;
  maxWarmupMs: number;
}): Promise<SlowReaderMemory> {
  return withProduct(0, async ({ consumer, cpu: whole, engine }) => {
    // One CPU window per phase (engine process, this process and its threads).
    const cpu: Partial<Record<SlowReaderPhase, CpuWindow>> = {};
    let open: CpuWindow | undefined;
    consumer.onPhase = (phase) => {
      open?.stop();
      open = undefined;
      if (phase === "baseline-before" || phase === "slow" || phase === "baseline-after") {
        open = new CpuWindow(engine.pid, process.pid, whole.labels);
        open.start();
        cpu[phase] = open;
      }
    };
    consumer.send({
      type: "run",
      run: {
        kind: "slow-reader",
        streams: o.streams,
        maxTokens: HUGE,
        slowReadEveryMs: o.slowReadEveryMs,
        durationMs: o.durationMs,
        baselineMs: o.baselineMs,
        warmupMs: o.warmupMs,
        maxWarmupMs: o.maxWarmupMs,
      },
    });
    const { outcome } = await consumer.expect("slow-reader");
    const { fast } = outcome;
    const before = cpu["baseline-before"]?.report;
    const after = cpu["baseline-after"]?.report;
    return {
      ...outcome,
      fastStreams: o.streams,
      slowReadEveryMs: o.slowReadEveryMs,
      durationMs: o.durationMs,
      baselineMs: o.baselineMs,
      rssStart: outcome.samples[0]?.rss ?? Number.NaN,
      rssEnd: outcome.samples.at(-1)?.rss ?? Number.NaN,
      cpu: {
        baselineBefore: before,
        slow: cpu.slow?.report,
        baselineAfter: after,
        baseline: averageCpu(before, fast.baselineBefore.windowMs, after, fast.baselineAfter.windowMs),
      },
      ratios: slowToBaseline(fast.slow, fast.baseline),
    };
  });
}
