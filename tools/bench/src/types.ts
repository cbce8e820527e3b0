// Result shapes of the bench scenarios (what results.json holds).
import type { Summary } from "@vllm-engine-core/probe";
import type { MemoryUsage } from "./consumer-protocol.js";
import type { FastStreamsWindow } from "./fast-window.js";
import type { ProfileSummary } from "./profile.js";

export interface ThreadCpu {
  label: string;
  tid: number;
  /** 1.0 = one core fully busy. */
  cpu: number;
}

export interface CpuReport {
  /** The mock engine process. */
  engine: number | undefined;
  /** The process running the frontend (all its threads). */
  frontend: number | undefined;
  /** Busiest threads of the frontend process (Node frontends only). */
  threads: ThreadCpu[];
}

export type Runner = "product" | "ceiling" | "python";

export interface ThroughputResult {
  runner: Runner;
  streams: number;
  /** Delivered outputs per second: per-request per-step deltas (1 token each) that reached a consumer. */
  outputsPerSec: number;
  tokens: number;
  /** Deliveries that carried more than one step's tokens (merged while unread). */
  merged: number;
  windowMs: number;
  cpu: CpuReport | undefined;
  skipped?: string;
  notes?: string[];
  /** outputs/s of every round when the bench ran several (the result shown is the best one). */
  rounds?: number[];
  /** CPU profiles of the working threads over the window (bench --profile). */
  profile?: ProfileSummary[];
}

export interface LatencyResult {
  runner: "product" | "direct";
  streams: number;
  caller: "idle" | "busy";
  stepMs: number;
  delay: Summary;
  merged: number;
  cpu: CpuReport | undefined;
}

export interface OpenStreamsMemory {
  streams: number;
  stepMs: number;
  baseline: { rss: number; mainHeapUsed: number; consumerHeapUsed: number };
  open: { rss: number; mainHeapUsed: number; consumerHeapUsed: number };
}

/** Slow window over baseline for the fast streams. */
export interface SlowReaderRatios {
  delayP50: number;
  delayP99: number;
  deliveredTokensPerSec: number;
  engineStepsPerSec: number;
}

export interface SlowReaderMemory {
  fastStreams: number;
  slowReadEveryMs: number;
  /** Length of the slow window. */
  durationMs: number;
  /** Length of each of the two baseline windows (before and after the slow one). */
  baselineMs: number;
  /** Consumer-thread memory (and process RSS) once a second in the slow window, first and last at its edges. */
  samples: MemoryUsage[];
  /** The same in the baseline windows. */
  baselineSamples: MemoryUsage[];
  rssStart: number;
  rssEnd: number;
  /** Slow-stream tokens queued unread when the slow window closed. */
  slowBufferedTokens: number;
  /** Slow-stream tokens received in the slow window (read + queued at its end). */
  slowTokens: number;
  slowReads: number;
  /** Fast-stream tokens received in the slow window. */
  fastTokens: number;
  /** Warm-up before the first window: its length, and whether the start-up backlog drained in time. */
  warmup: { ms: number; settled: boolean; minMs: number; maxMs: number };
  /** The fast streams per window; `baseline` pools the two baseline windows. */
  fast: {
    baselineBefore: FastStreamsWindow;
    slow: FastStreamsWindow;
    baselineAfter: FastStreamsWindow;
    baseline: FastStreamsWindow;
  };
  cpu: {
    baselineBefore: CpuReport | undefined;
    slow: CpuReport | undefined;
    baselineAfter: CpuReport | undefined;
    baseline: CpuReport | undefined;
  };
  ratios: SlowReaderRatios;
}
