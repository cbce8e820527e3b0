// The bench's own messages between a scenario's main thread and its consumer worker, on top of the
// attach / close / marker ones every consumer worker shares (the probe's ConsumerControl, ConsumerNotice).
import type { Summary } from "@vllm-engine-core/probe";
import type { FastStreamsWindow } from "./fast-window.js";
import type { WindowPhase } from "./window.js";

export interface MemoryUsage {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

export type ConsumerRun =
  /** Streams are the load ids ("load-0" …) so a replay recording matches; `creditFile` publishes progress. */
  | {
      kind: "throughput";
      streams: number;
      maxTokens: number;
      warmupMs: number;
      measureMs: number;
      creditFile?: string;
      /** Instrument the consuming client with @vllm-engine-core/metrics first (and scrape it once at the end). */
      metrics?: boolean;
    }
  | { kind: "latency"; streams: number; maxTokens: number; warmupMs: number; measureMs: number }
  /** Reports memory, opens the streams, reads them all, reports memory once every stream flowed for `settleMs`. */
  | { kind: "open-streams"; streams: number; maxTokens: number; settleMs: number }
  /**
   * `streams` fast streams plus one more, all read as fast as possible: `warmupMs` once all flow, a
   * `baselineMs` window, then `durationMs` with the extra stream read only once every `slowReadEveryMs`,
   * then another `baselineMs` window with it fast again.
   */
  | {
      kind: "slow-reader";
      streams: number;
      maxTokens: number;
      slowReadEveryMs: number;
      durationMs: number;
      baselineMs: number;
      /** Least warm-up once every stream flows; it goes on until the start-up backlog drained, up to `maxWarmupMs`. */
      warmupMs: number;
      maxWarmupMs: number;
    };

/** Phases of the slow-reader run, announced as they start (the main thread samples CPU per phase). */
export type SlowReaderPhase = "baseline-before" | "slow" | "baseline-after" | "slow-reader-done";

export type ToConsumer = { type: "run"; run: ConsumerRun };

export interface ThroughputOutcome {
  tokens: number;
  outputs: number;
  merged: number;
  windowMs: number;
}

export interface LatencyOutcome {
  delay: Summary;
  merged: number;
}

export interface SlowReaderOutcome {
  /** Consumer-thread memory once per second while the slow reader lagged (first at its start, last at its end). */
  samples: MemoryUsage[];
  /** The same, taken in the baseline windows (so both phases pay for the same full GCs). */
  baselineSamples: MemoryUsage[];
  /** Tokens of the slow stream that were queued unread at the end. */
  slowBufferedTokens: number;
  /** Tokens the slow stream received while it lagged (read + queued at the end). */
  slowTokens: number;
  /** Reads of the slow stream while it lagged. */
  slowReads: number;
  /** Tokens the fast streams received while the slow reader lagged. */
  fastTokens: number;
  /** How long the warm-up took, and whether the start-up backlog drained within `maxWarmupMs`. */
  warmup: { ms: number; settled: boolean; minMs: number; maxMs: number };
  /** The fast streams in each window, and both baseline windows pooled. */
  fast: {
    baselineBefore: FastStreamsWindow;
    slow: FastStreamsWindow;
    baselineAfter: FastStreamsWindow;
    baseline: FastStreamsWindow;
  };
}

export type FromConsumer =
  | { type: "phase"; phase: WindowPhase | SlowReaderPhase }
  | { type: "memory"; usage: MemoryUsage }
  | { type: "throughput"; outcome: ThroughputOutcome }
  | { type: "latency"; outcome: LatencyOutcome }
  | { type: "slow-reader"; outcome: SlowReaderOutcome };
