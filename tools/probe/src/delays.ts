// Output delay samples: (engine send time, receive − send) pairs, filtered to a time window.
import { SampleBuffer } from "./stats.js";

/** Records pairs of (engine send time ms, CLOCK_MONOTONIC; delay ms) without allocating per sample. */
export class DelayRecorder {
  readonly #pairs = new SampleBuffer(1 << 14);
  /** Outputs that carried more tokens than one engine step produces (merged while unread). */
  merged = 0;

  record(sentMs: number, receivedMs: number): void {
    this.#pairs.add(sentMs);
    this.#pairs.add(receivedMs - sentMs);
  }

  get count(): number {
    return this.#pairs.length / 2;
  }

  /** Flat [sent, delay, sent, delay, …] copy, transferable to another thread. */
  pairs(): Float64Array {
    return this.#pairs.values();
  }
}

/** Delays of the outputs the engine sent within [startMs, endMs] (inclusive). */
export function delaysSentWithin(pairs: Float64Array, startMs: number, endMs: number): Float64Array {
  const out: number[] = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const sent = pairs[i]!;
    if (sent >= startMs && sent <= endMs) out.push(pairs[i + 1]!);
  }
  return Float64Array.from(out);
}
