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

/** CPU during a server-scenario window (1.0 = one core busy). */
export interface ServerCpu {
  /** The process serving the streams: the bare client's or the server's (all its threads). */
  frontend: number | undefined;
  engine: number | undefined;
  /** The HTTP load generator's process (server phase only). */
  loadGenerator?: number | undefined;
  /** Frontend process CPU time per delivered token, µs. */
  frontendUsPerToken: number | undefined;
  /**
   * The event loop's thread alone (the main thread: HTTP, text, SSE writes), µs per delivered token, split
   * into user time and kernel time (server phase; the kernel's share is mostly the one loopback write per
   * SSE event, which delivers the bytes to the reader inside the write).
   */
  eventLoop?: { userUsPerToken: number; kernelUsPerToken: number } | undefined;
}

/** One interval of the long-prompt phase: the other streams while it ran (or the baseline before). */
export interface ServerLongPromptRow {
  what: string;
  promptTokens: number | null;
  /** The request's time at the HTTP client (send → response complete); null for the baseline. */
  ms: number | null;
  /** The other streams' time between consecutive SSE events. */
  othersGap: Summary;
  /** The other streams' engine output → SSE bytes at the client. */
  othersDelay: Summary;
}

export interface ServerBenchResult {
  streams: number;
  stepMs: number;
  engine: "mock";
  /** streams × steps/s when the engine is paced; null at full load. */
  offeredTokensPerSec: number | null;
  detokenize: { library: string; proseNsPerToken: number; mockIdsNsPerToken: number; tokens: number };
  bare: {
    tokensPerSec: number;
    tokens: number;
    deliveries: number;
    windowMs: number;
    /** Engine send → consumer receive. */
    delay: Summary;
    cpu: ServerCpu;
  };
  server: {
    tokensPerSec: number;
    tokens: number;
    events: number;
    /** On the load generator's clock. */
    windowMs: number;
    scenarioWindowMs: number;
    /** Engine send → SSE bytes at the HTTP client. */
    delay: Summary;
    /** SSE events whose token count matched no engine output the server read (should be 0). */
    unmatched: number;
    cpu: ServerCpu;
  };
  /** Server delay percentile minus the bare client's, same run. */
  added: { p50: number; p99: number };
  longPrompt?: { rows: ServerLongPromptRow[] };
  notes?: string[];
}
