// The hot-path series must leave prom-client's exposition exactly as prom-client's own observe()/inc() would.
import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { CounterSeries, collectHistogramSeries, HistogramSeries } from "../src/fast-series.ts";

const BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.5, 1, 2.5, 10];
const LABELS = { model_name: "m", engine: "0" };

function pair() {
  const fast = new Registry();
  const plain = new Registry();
  const make = (registry: Registry, collect?: typeof collectHistogramSeries) =>
    new Histogram({
      name: "h",
      help: "h",
      buckets: BUCKETS,
      labelNames: ["model_name", "engine"],
      registers: [registry],
      ...(collect ? { collect } : {}),
    });
  const fastMetric = make(fast, collectHistogramSeries);
  const plainMetric = make(plain);
  plainMetric.zero(LABELS);
  return { fast, plain, fastMetric, plainMetric, series: new HistogramSeries(fastMetric, LABELS) };
}

/**
 * The two expositions are the same line for line; `_sum` values are equal up to rounding (the series adds a
 * batch's values before adding them to the total, so the float additions group differently).
 */
function expectSameExposition(fast: string, plain: string): void {
  const a = fast.split("\n");
  const b = plain.split("\n");
  expect(a.length).toBe(b.length);
  a.forEach((line, i) => {
    const other = b[i]!;
    if (!line.startsWith("h_sum")) {
      expect(line).toBe(other);
      return;
    }
    const [name, value] = line.split(" ");
    const [otherName, otherValue] = other.split(" ");
    expect(name).toBe(otherName);
    expect(Number(value)).toBeCloseTo(Number(otherValue), 6);
  });
}

// Values on, between, below and above the bounds.
const values = [0, 0.01, 0.0100001, 0.03, 0.1, 0.7, 1, 2.5, 9.99, 10, 10.5, 1e6, -1, 0.025];

describe("HistogramSeries", () => {
  it("scrapes the same text as prom-client's observe(), scraped mid-way and again", async () => {
    const { fast, plain, series, plainMetric } = pair();
    for (const v of values) {
      series.observe(v);
      plainMetric.observe(LABELS, v);
    }
    expectSameExposition(await fast.metrics(), await plain.metrics());
    for (let i = 0; i < 1000; i++) {
      const v = (i % 37) * 0.03;
      series.observe(v);
      plainMetric.observe(LABELS, v);
    }
    expectSameExposition(await fast.metrics(), await plain.metrics());
    expectSameExposition(await fast.metrics(), await plain.metrics()); // a scrape moves nothing twice
  });

  it("rejects a non-finite value as prom-client does, keeping what was observed before it", async () => {
    const { fast, plain, series, plainMetric } = pair();
    series.observe(0.02);
    plainMetric.observe(LABELS, 0.02);
    expect(() => series.observe(Number.POSITIVE_INFINITY)).toThrow(/not a valid number/);
    expect(() => plainMetric.observe(LABELS, Number.POSITIVE_INFINITY)).toThrow(/not a valid number/);
    expect(await fast.metrics()).toBe(await plain.metrics());
  });

  it("after a reset of the metric, counts only what was observed after it (flushed or not before it)", async () => {
    for (const flushFirst of [true, false]) {
      const { fast, plain, series, fastMetric, plainMetric } = pair();
      series.observe(0.02);
      plainMetric.observe(LABELS, 0.02);
      if (flushFirst) series.flush();
      fastMetric.reset();
      plainMetric.reset();
      series.observe(0.2);
      plainMetric.observe(LABELS, 0.2);
      expectSameExposition(await fast.metrics(), await plain.metrics());
      // A reset with nothing observed after it.
      series.observe(0.3);
      plainMetric.observe(LABELS, 0.3);
      fastMetric.reset();
      plainMetric.reset();
      expectSameExposition(await fast.metrics(), await plain.metrics());
    }
  });

  it("a reset after a flush, old test kept: counts only what was observed after it", async () => {
    const { fast, plain, series, fastMetric, plainMetric } = pair();
    series.observe(0.02);
    series.flush();
    fastMetric.reset();
    plainMetric.reset();
    series.observe(0.2);
    plainMetric.observe(LABELS, 0.2);
    expect(await fast.metrics()).toBe(await plain.metrics());
  });

  it("flush() makes pending observations visible to a direct get()", async () => {
    const { series, fastMetric } = pair();
    series.observe(0.04);
    series.flush();
    const { values: got } = await fastMetric.get();
    expect(got.find((v) => v.metricName === "h_count")?.value).toBe(1);
  });
});

describe("CounterSeries", () => {
  it("counts as prom-client's inc() does", async () => {
    const fast = new Registry();
    const plain = new Registry();
    const make = (registry: Registry) =>
      new Counter({
        name: "c_total",
        help: "c",
        labelNames: ["model_name", "engine"],
        registers: [registry],
      });
    const series = new CounterSeries(make(fast), LABELS);
    const plainMetric = make(plain);
    plainMetric.inc(LABELS, 0);
    for (const v of [1, 5, 0, 2.5]) {
      series.inc(v);
      plainMetric.inc(LABELS, v);
    }
    expect(await fast.metrics()).toBe(await plain.metrics());
  });
});
