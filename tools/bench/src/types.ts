// Result shapes of the bench scenarios (what results.json holds).
import type { Summary } from "@vllm-engine-core/probe";
import type { SlowReaderOutcome } from "./consumer-protocol.js";
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

/** "product-metrics": the product with @vllm-engine-core/metrics instrumented on the consuming client. */
export type Runner = "product" | "product-metrics" | "ceiling" | "python";

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

/** What the consumer thread measured (SlowReaderOutcome), plus the scenario's settings and the derived figures. */
export interface SlowReaderMemory extends SlowReaderOutcome {
  fastStreams: number;
  slowReadEveryMs: number;
  /** Length of the slow window. */
  durationMs: number;
  /** Length of each of the two baseline windows (before and after the slow one). */
  baselineMs: number;
  rssStart: number;
  rssEnd: number;
  cpu: {
    baselineBefore: CpuReport | undefined;
    slow: CpuReport | undefined;
    baselineAfter: CpuReport | undefined;
    baseline: CpuReport | undefined;
  };
  ratios: SlowReaderRatios;
}
