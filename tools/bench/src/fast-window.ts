// What a group of streams read as fast as possible saw during one time window: engine → consumer delay
// (the latency section's method: receive time − the engine's send stamp, on CLOCK_MONOTONIC), the rate
// delivered to them, and the engine's own step rate measured on the engine's clock.
import type { Summary } from "@vllm-engine-core/probe";
import { LogHistogram } from "./histogram.js";

export interface FastStreamsWindow {
  /** Consumer-clock length of the window. */
  windowMs: number;
  /** Engine send → consumer read, one sample per delivery (a merged delivery counts from its newest step). */
  delay: Summary;
  deliveries: number;
  /** Deliveries that carried more than one engine step's tokens (merged while unread). */
  merged: number;
  tokens: number;
  /** Tokens the streams received per second of consumer time. */
  deliveredTokensPerSec: number;
  deliveriesPerSec: number;
  /**
   * Engine steps per second on the engine's clock: per stream, tokens received between its first and last
   * delivery in the window over the difference of those deliveries' engine stamps (one token per running
   * request per step, merged deliveries included), summed over the streams. It falls if the engine slows
   * down, whatever the consumer does.
   */
  engineStepsPerSec: number;
  /** The sums behind engineStepsPerSec (stream-seconds of engine time, tokens in them). */
  engineSpan: { seconds: number; tokens: number };
}

export class FastWindowRecorder {
  readonly delays = new LogHistogram();
  deliveries = 0;
  merged = 0;
  tokens = 0;
  startedAt = Number.NaN;
  endedAt = Number.NaN;
  /** Per stream: cumulative tokens and engine stamp (s) at its first and latest delivery in the window. */
  readonly #firstTokens: Float64Array;
  readonly #firstStamp: Float64Array;
  readonly #lastTokens: Float64Array;
  readonly #lastStamp: Float64Array;
  readonly #seen: Uint8Array;

  constructor(streams: number) {
    this.#firstTokens = new Float64Array(streams);
    this.#firstStamp = new Float64Array(streams);
    this.#lastTokens = new Float64Array(streams);
    this.#lastStamp = new Float64Array(streams);
    this.#seen = new Uint8Array(streams);
  }

  /**
   * One delivery of `tokens` tokens to stream `stream`, whose cumulative count is now `streamTokens`,
   * stamped `engineStampS` (EngineCoreOutputs.timestamp, CLOCK_MONOTONIC seconds), read at `readMs`
   * (the same clock, ms).
   */
  record(stream: number, tokens: number, streamTokens: number, engineStampS: number, readMs: number): void {
    this.deliveries++;
    this.tokens += tokens;
    if (tokens > 1) this.merged++;
    this.delays.add(readMs - engineStampS * 1000);
    if (this.#seen[stream] === 0) {
      this.#seen[stream] = 1;
      this.#firstTokens[stream] = streamTokens;
      this.#firstStamp[stream] = engineStampS;
    }
    this.#lastTokens[stream] = streamTokens;
    this.#lastStamp[stream] = engineStampS;
  }

  /** Stream-seconds of engine time covered and the tokens produced in them. */
  engineSpan(): { seconds: number; tokens: number } {
    let seconds = 0;
    let tokens = 0;
    for (let i = 0; i < this.#seen.length; i++) {
      if (this.#seen[i] === 0) continue;
      seconds += this.#lastStamp[i]! - this.#firstStamp[i]!;
      tokens += this.#lastTokens[i]! - this.#firstTokens[i]!;
    }
    return { seconds, tokens };
  }
}

function windowOf(
  windowMs: number,
  delays: LogHistogram,
  counts: { deliveries: number; merged: number; tokens: number },
  span: { seconds: number; tokens: number },
): FastStreamsWindow {
  return {
    windowMs,
    delay: delays.summary(),
    ...counts,
    deliveredTokensPerSec: (counts.tokens * 1000) / windowMs,
    deliveriesPerSec: (counts.deliveries * 1000) / windowMs,
    engineStepsPerSec: span.seconds > 0 ? span.tokens / span.seconds : Number.NaN,
    engineSpan: span,
  };
}

/** The figures of the given windows taken together (delays pooled, rates over the summed time). */
export function pooledWindow(recorders: readonly FastWindowRecorder[]): FastStreamsWindow {
  const delays = new LogHistogram();
  const counts = { deliveries: 0, merged: 0, tokens: 0 };
  const span = { seconds: 0, tokens: 0 };
  let windowMs = 0;
  for (const r of recorders) {
    delays.merge(r.delays);
    counts.deliveries += r.deliveries;
    counts.merged += r.merged;
    counts.tokens += r.tokens;
    const s = r.engineSpan();
    span.seconds += s.seconds;
    span.tokens += s.tokens;
    windowMs += r.endedAt - r.startedAt;
  }
  return windowOf(windowMs, delays, counts, span);
}
