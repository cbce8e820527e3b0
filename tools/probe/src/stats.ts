// Percentiles and summaries of latency samples.

/**
 * Nearest-rank percentile of an ascending array: the smallest sample such that at least p % of the
 * samples are ≤ it (p = 0 gives the minimum, p = 100 the maximum). Always an observed value.
 */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be in [0, 100], got ${p}`);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export interface Summary {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Summary of unsorted samples (NaN fields when there are none). The input is not modified. */
export function summarize(samples: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  const n = sorted.length;
  return {
    count: n,
    min: n ? sorted[0]! : Number.NaN,
    p50: percentileSorted(sorted, 50),
    p90: percentileSorted(sorted, 90),
    p99: percentileSorted(sorted, 99),
    max: n ? sorted[n - 1]! : Number.NaN,
    mean: n ? sum / n : Number.NaN,
  };
}

/** Append-only numeric sample buffer that does not allocate per sample. */
export class SampleBuffer {
  #data: Float64Array;
  #length = 0;

  constructor(initialCapacity = 1024) {
    this.#data = new Float64Array(Math.max(1, initialCapacity));
  }

  add(value: number): void {
    if (this.#length === this.#data.length) {
      const next = new Float64Array(this.#data.length * 2);
      next.set(this.#data);
      this.#data = next;
    }
    this.#data[this.#length++] = value;
  }

  get length(): number {
    return this.#length;
  }

  /** A copy of the samples recorded so far. */
  values(): Float64Array {
    return this.#data.slice(0, this.#length);
  }
}

/** Formats milliseconds for tables: µs below 1 ms, ms below 1 s, else s. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "n/a";
  const abs = Math.abs(ms);
  if (abs < 1) return `${(ms * 1000).toFixed(0)} µs`;
  if (abs < 1000) return `${ms.toFixed(2)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}
