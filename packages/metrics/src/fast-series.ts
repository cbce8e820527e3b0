// Hot-path updates of prom-client series. A child from `metric.labels(...)` hashes its label values on every
// observe()/inc() (prom-client's hashObject + validateLabel), which costs more than everything else a
// per-output observation does. These wrappers find the series' entry in the metric once and update it in
// place, the way prom-client's own observe()/inc() do (histogram.js observe, counter.js inc at prom-client
// 15.1.3, the pinned version). If the metric was reset (a new hashMap), they go through prom-client once and
// find the entry again.
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

export class HistogramSeries {
  readonly #metric: Histogram;
  readonly #internals: Internals<HistogramEntry>;
  readonly #labels: Labels;
  readonly #bounds: number[];
  readonly #keys: string[];
  #map: Record<string, HistogramEntry> | undefined;
  #entry: HistogramEntry | undefined;

  constructor(metric: Histogram, labels: Labels) {
    this.#metric = metric;
    this.#internals = metric as unknown as Internals<HistogramEntry>;
    this.#labels = labels;
    this.#bounds = [...(this.#internals.upperBounds ?? [])];
    this.#keys = this.#bounds.map(String);
    metric.zero(labels);
    this.#find();
  }

  #find(): void {
    this.#map = this.#internals.hashMap;
    this.#entry = findEntry(this.#map, this.#labels)?.[1];
  }

  observe(value: number): void {
    const entry = this.#entry;
    if (entry === undefined || this.#internals.hashMap !== this.#map || !Number.isFinite(value)) {
      this.#metric.observe(this.#labels, value);
      this.#find();
      return;
    }
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        entry.bucketValues[this.#keys[i]!]! += 1;
        break;
      }
    }
    entry.sum += value;
    entry.count += 1;
  }
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
