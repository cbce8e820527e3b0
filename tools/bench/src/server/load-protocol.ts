// Messages between the server scenario and its HTTP load generator (a separate process, so that the load
// generator never shares the server's thread or shows up in the server process's CPU).

/** What one stream delivered while recording: per SSE event, cumulative completion tokens and arrival time. */
export interface StreamRecord {
  /** The response's `id` (the server's request id, `chatcmpl-…`). */
  id: string;
  /** `usage.completion_tokens` of each event (`continuous_usage_stats`), cumulative. */
  counts: number[];
  /** CLOCK_MONOTONIC (ms, sub-ms; tools/probe/src/clock.ts) when the bytes of each event arrived. */
  arrivals: number[];
}

export type ToLoad =
  | {
      type: "open";
      url: string;
      streams: number;
      /** JSON body of each streaming chat completion; `{i}` in it is replaced by the stream's index. */
      body: string;
    }
  | { type: "record-start" }
  | { type: "record-stop" }
  | { type: "request"; url: string; body: string }
  | { type: "close" };

export type FromLoad =
  | { type: "flowing"; streams: number }
  | { type: "records"; windowMs: number; tokens: number; events: number; streams: StreamRecord[] }
  | { type: "response"; status: number; bytes: number; startedAt: number; endedAt: number; body: string }
  | { type: "failed"; message: string };
