// Hot-path updates of prom-client series. A child from `metric.labels(...)` hashes its label values on every
// observe()/inc() (prom-client's hashObject + validateLabel), which costs more than everything else a
// per-output observation does. These wrappers find the series' entry in the metric once and update it in
// place, the way prom-client's own observe()/inc() do (histogram.js observe, counter.js inc at prom-client
// 15.1.3, the pinned version). Histograms count into their own arrays and hand the counts over when the metric is
// collected. After a reset of the metric (a new hashMap) they find or create their entry again, and what a
// histogram series counted before the reset is dropped, as prom-client drops it.
import type { Counter, Histogram } from "prom-client";

type Labels = Record<string, string>;

interface HistogramEntry {
  labels: Labels;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}
interface CounterEntry {
  labels: Labels;
  value: number;
}
interface Internals<E> {
  hashMap: Record<string, E>;
  upperBounds?: number[];
}

function sameLabels(a: Labels, b: Labels): boolean {
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((k) => String(a[k]) === b[k]);
}

function findEntry<E extends { labels: Labels }>(
  map: Record<string, E>,
  labels: Labels,
): [string, E] | undefined {
  for (const key of Object.keys(map)) {
    const entry = map[key]!;
    if (sameLabels(entry.labels, labels)) return [key, entry];
  }
  return undefined;
}

/**
 * One histogram series. observe() only counts into this object's own bucket array (a bound search and three
 * additions: the per-output inter-token latency runs it once per delivered output); the counts move into
 * prom-client's entry when the metric is collected (a scrape: see `collectHistogramSeries`) or on flush().
 */
export class HistogramSeries {
  readonly #metric: Histogram;
  readonly #internals: Internals<HistogramEntry>;
  readonly #labels: Labels;
  readonly #bounds: Float64Array;
  readonly #keys: string[];
  /** Observations not yet in prom-client's entry: per bucket (the last one is +Inf), their sum and count. */
  readonly #pending: Float64Array;
  #pendingSum = 0;
  #pendingCount = 0;
  #map: Record<string, HistogramEntry> | undefined;
  #entry: HistogramEntry | undefined;

  constructor(metric: Histogram, labels: Labels) {
    this.#metric = metric;
    this.#internals = metric as unknown as Internals<HistogramEntry>;
    this.#labels = labels;
    this.#bounds = Float64Array.from(this.#internals.upperBounds ?? []);
    this.#keys = Array.from(this.#bounds, String);
    this.#pending = new Float64Array(this.#bounds.length + 1);
    metric.zero(labels);
    this.#find();
    seriesOf(metric).push(this);
  }

  #find(): void {
    this.#map = this.#internals.hashMap;
    this.#entry = findEntry(this.#map, this.#labels)?.[1];
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) {
      // prom-client's own rules for NaN / ±Infinity, in order with what is pending.
      this.flush();
      this.#metric.observe(this.#labels, value);
      this.#find();
      return;
    }
    // The metric was reset since the last observation: what is pending was observed before it.
    if (this.#internals.hashMap !== this.#map) this.#dropPending();
    const bounds = this.#bounds;
    const n = bounds.length;
    let i = 0;
    while (i < n && value > bounds[i]!) i++;
    this.#pending[i]! += 1;
    this.#pendingSum += value;
    this.#pendingCount += 1;
  }

  /** Moves the pending observations into prom-client's entry. */
  flush(): void {
    if (this.#internals.hashMap !== this.#map) this.#dropPending(); // reset after they were observed
    if (this.#pendingCount === 0) return;
    if (this.#entry === undefined) {
      this.#metric.zero(this.#labels);
      this.#find();
    }
    const entry = this.#entry!;
    const pending = this.#pending;
    const keys = this.#keys;
    for (let i = 0; i < keys.length; i++) {
      if (pending[i] !== 0) {
        entry.bucketValues[keys[i]!]! += pending[i]!;
        pending[i] = 0;
      }
    }
    pending[keys.length] = 0; // +Inf: prom-client derives it from the count
    entry.sum += this.#pendingSum;
    entry.count += this.#pendingCount;
    this.#pendingSum = 0;
    this.#pendingCount = 0;
  }

  /** Forgets what is pending and follows the metric's new series map (after a reset). */
  #dropPending(): void {
    this.#pending.fill(0);
    this.#pendingSum = 0;
    this.#pendingCount = 0;
    this.#map = this.#internals.hashMap;
    this.#entry = undefined; // created again (by flush) once something is observed
  }
}

const seriesByMetric = new WeakMap<Histogram, HistogramSeries[]>();

function seriesOf(metric: Histogram): HistogramSeries[] {
  let list = seriesByMetric.get(metric);
  if (list === undefined) {
    list = [];
    seriesByMetric.set(metric, list);
  }
  return list;
}

/**
 * The `collect` of every histogram that has HistogramSeries: prom-client calls it (with the metric as `this`)
 * before it reads the metric's values, so a scrape sees every observation made before it.
 */
export function collectHistogramSeries(this: Histogram): void {
  for (const series of seriesByMetric.get(this) ?? []) series.flush();
}

export class CounterSeries {
  readonly #metric: Counter;
  readonly #internals: Internals<CounterEntry>;
  readonly #labels: Labels;
  #map: Record<string, CounterEntry> | undefined;
  #entry: CounterEntry | undefined;

  constructor(metric: Counter, labels: Labels) {
    this.#metric = metric;
    this.#internals = metric as unknown as Internals<CounterEntry>;
    this.#labels = labels;
    metric.inc(labels, 0);
    this.#find();
  }

  #find(): void {
    this.#map = this.#internals.hashMap;
    this.#entry = findEntry(this.#map, this.#labels)?.[1];
  }

  inc(value = 1): void {
    const entry = this.#entry;
    if (
      entry === undefined ||
      this.#internals.hashMap !== this.#map ||
      !(value >= 0) ||
      !Number.isFinite(value)
    ) {
      this.#metric.inc(this.#labels, value);
      this.#find();
      return;
    }
    entry.value += value;
  }
}
