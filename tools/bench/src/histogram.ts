// A fixed-size log-bucketed histogram of delays: p50/p99 over millions of samples without per-sample
// memory, so recording them does not show up in the memory figures it sits next to.
import type { Summary } from "@vllm-engine-core/probe";

/** Smallest delay with its own bucket (1 µs, in ms); anything smaller (or negative) goes to bucket 0. */
const MIN_MS = 0.001;
/** Largest delay with its own bucket (100 s); anything larger goes to the last bucket. */
const MAX_MS = 100_000;
/** Relative bucket width: a percentile is reported within ±0.5 % of the true sample. */
const GROWTH = 1.01;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = Math.ceil(Math.log(MAX_MS / MIN_MS) / LOG_GROWTH) + 2;

export class LogHistogram {
  readonly #counts = new Float64Array(BUCKETS);
  #count = 0;
  #sum = 0;
  #min = Number.POSITIVE_INFINITY;
  #max = Number.NEGATIVE_INFINITY;

  add(ms: number): void {
    let i = 0;
    if (ms >= MIN_MS) i = Math.min(BUCKETS - 1, 1 + Math.floor(Math.log(ms / MIN_MS) / LOG_GROWTH));
    this.#counts[i]!++;
    this.#count++;
    this.#sum += ms;
    if (ms < this.#min) this.#min = ms;
    if (ms > this.#max) this.#max = ms;
  }

  /** Forgets every sample. */
  reset(): void {
    this.#counts.fill(0);
    this.#count = 0;
    this.#sum = 0;
    this.#min = Number.POSITIVE_INFINITY;
    this.#max = Number.NEGATIVE_INFINITY;
  }

  /** Adds every sample of `other` to this histogram. */
  merge(other: LogHistogram): this {
    for (let i = 0; i < BUCKETS; i++) this.#counts[i]! += other.#counts[i]!;
    this.#count += other.#count;
    this.#sum += other.#sum;
    this.#min = Math.min(this.#min, other.#min);
    this.#max = Math.max(this.#max, other.#max);
    return this;
  }

  get count(): number {
    return this.#count;
  }

  /** Nearest-rank percentile, as the geometric middle of its bucket clamped to the observed min/max. */
  percentile(p: number): number {
    if (this.#count === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.#count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.#counts[i]!;
      if (seen >= rank) {
        const middle = i === 0 ? this.#min : MIN_MS * GROWTH ** (i - 0.5);
        return Math.min(this.#max, Math.max(this.#min, middle));
      }
    }
    return this.#max;
  }

  summary(): Summary {
    const n = this.#count;
    return {
      count: n,
      min: n ? this.#min : Number.NaN,
      p50: this.percentile(50),
      p90: this.percentile(90),
      p99: this.percentile(99),
      max: n ? this.#max : Number.NaN,
      mean: n ? this.#sum / n : Number.NaN,
    };
  }
}
