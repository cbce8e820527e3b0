// Messages between a bench scenario's main thread and its consumer worker.
import type { ClientHandle } from "@vllm-engine-core/client";
import type { Summary } from "@vllm-engine-core/probe";
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
    }
  | { kind: "latency"; streams: number; maxTokens: number; warmupMs: number; measureMs: number }
  /** Reports memory, opens the streams, reads them all, reports memory once every stream flowed for `settleMs`. */
  | { kind: "open-streams"; streams: number; maxTokens: number; settleMs: number }
  /** `streams` read as fast as possible plus one stream read once every `slowReadEveryMs`. */
  | { kind: "slow-reader"; streams: number; maxTokens: number; slowReadEveryMs: number; durationMs: number };

export type ToConsumer =
  | { type: "attach"; handle: ClientHandle }
  | { type: "run"; run: ConsumerRun }
  | { type: "close" };

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
  /** Consumer-thread memory once per second while the slow reader lagged. */
  samples: MemoryUsage[];
  /** Tokens of the slow stream that were queued unread at the end. */
  slowBufferedTokens: number;
  /** Tokens the slow stream received in total (read + queued). */
  slowTokens: number;
  fastTokens: number;
}

export type FromConsumer =
  | { type: "marker"; fd: number | undefined }
  | { type: "attached" }
  | { type: "phase"; phase: WindowPhase }
  | { type: "memory"; usage: MemoryUsage }
  | { type: "throughput"; outcome: ThroughputOutcome }
  | { type: "latency"; outcome: LatencyOutcome }
  | { type: "slow-reader"; outcome: SlowReaderOutcome }
  | { type: "closed" }
  | { type: "error"; message: string; stack: string | undefined };
