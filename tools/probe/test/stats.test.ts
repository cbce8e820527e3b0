import { describe, expect, it } from "vitest";
import { DelayRecorder, delaysSentWithin } from "../src/delays.js";
import { formatMs, percentileSorted, SampleBuffer, summarize } from "../src/stats.js";

describe("percentileSorted (nearest rank)", () => {
  const hundred = Float64Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it("returns observed values: p50 of 1..100 is 50, p99 is 99, p100 is the max, p0 the min", () => {
    expect(percentileSorted(hundred, 50)).toBe(50);
    expect(percentileSorted(hundred, 99)).toBe(99);
    expect(percentileSorted(hundred, 100)).toBe(100);
    expect(percentileSorted(hundred, 0)).toBe(1);
    expect(percentileSorted(hundred, 99.5)).toBe(100);
  });

  it("handles tiny inputs: one sample is every percentile; none is NaN", () => {
    expect(percentileSorted([7], 1)).toBe(7);
    expect(percentileSorted([7], 99)).toBe(7);
    expect(percentileSorted([1, 2], 50)).toBe(1);
    expect(percentileSorted([1, 2], 51)).toBe(2);
    expect(percentileSorted([], 50)).toBeNaN();
  });

  it("rejects percentiles outside [0, 100]", () => {
    expect(() => percentileSorted([1], 101)).toThrow(RangeError);
    expect(() => percentileSorted([1], -1)).toThrow(RangeError);
    expect(() => percentileSorted([1], Number.NaN)).toThrow(RangeError);
  });
});

describe("summarize", () => {
  it("sorts numerically (not lexicographically) without touching the input", () => {
    const input = [10, 9, 100, 1, 2];
    const s = summarize(input);
    expect(input).toEqual([10, 9, 100, 1, 2]);
    expect(s).toEqual({ count: 5, min: 1, p50: 9, p90: 100, p99: 100, max: 100, mean: 24.4 });
  });

  it("p99 of 1000 samples ignores the 10 largest", () => {
    const samples = Array.from({ length: 1000 }, (_, i) => (i < 990 ? 0.5 : 5000));
    const s = summarize(samples);
    expect(s.p99).toBe(0.5);
    expect(s.max).toBe(5000);
  });

  it("is all NaN with count 0 for no samples", () => {
    const s = summarize([]);
    expect(s.count).toBe(0);
    expect(s.p50).toBeNaN();
    expect(s.max).toBeNaN();
    expect(s.mean).toBeNaN();
  });
});

describe("SampleBuffer", () => {
  it("grows past its initial capacity and keeps order", () => {
    const b = new SampleBuffer(2);
    for (let i = 0; i < 1000; i++) b.add(i);
    expect(b.length).toBe(1000);
    const v = b.values();
    expect(v[0]).toBe(0);
    expect(v[999]).toBe(999);
    v[0] = -1;
    expect(b.values()[0]).toBe(0); // values() is a copy
  });
});

describe("delays", () => {
  it("keeps only outputs the engine sent inside the window", () => {
    const r = new DelayRecorder();
    r.record(1000, 1000.5); // before the window
    r.record(2000, 6900); // inside: delayed 4.9 s
    r.record(3000, 6901);
    r.record(7000, 7000.3); // after
    expect(r.count).toBe(4);
    expect([...delaysSentWithin(r.pairs(), 2000, 6000)]).toEqual([4900, 3901]);
    expect(delaysSentWithin(r.pairs(), 8000, 9000)).toHaveLength(0);
  });
});

describe("formatMs", () => {
  it("picks µs, ms or s", () => {
    expect(formatMs(0.4321)).toBe("432 µs");
    expect(formatMs(12.345)).toBe("12.35 ms");
    expect(formatMs(4700)).toBe("4.70 s");
    expect(formatMs(Number.NaN)).toBe("n/a");
  });
});
