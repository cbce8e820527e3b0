import { describe, expect, it } from "vitest";
import { FastWindowRecorder, pooledWindow } from "../src/fast-window.js";
import { LogHistogram } from "../src/histogram.js";
import { averageCpu, slowToBaseline } from "../src/slow-reader.js";

describe("LogHistogram", () => {
  it("reports nearest-rank percentiles within ±0.5 % and exact count, min, max and mean", () => {
    const h = new LogHistogram();
    for (let i = 1; i <= 1000; i++) h.add(i / 10); // 0.1 … 100 ms
    const s = h.summary();
    expect(s.count).toBe(1000);
    expect(s.min).toBe(0.1);
    expect(s.max).toBe(100);
    expect(s.mean).toBeCloseTo(50.05, 9);
    expect(Math.abs(s.p50 / 50 - 1)).toBeLessThanOrEqual(0.005);
    expect(Math.abs(s.p99 / 99 - 1)).toBeLessThanOrEqual(0.005);
  });

  it("keeps values below 1 µs (and negative skew) in the first bucket, clamped to the observed minimum", () => {
    const h = new LogHistogram();
    h.add(-0.05);
    h.add(0.0001);
    expect(h.percentile(50)).toBe(-0.05);
    expect(h.summary().max).toBe(0.0001);
  });

  it("merges and resets", () => {
    const a = new LogHistogram();
    const b = new LogHistogram();
    a.add(1);
    b.add(3);
    b.add(5);
    expect(a.merge(b).summary()).toMatchObject({ count: 3, min: 1, max: 5 });
    a.reset();
    expect(a.count).toBe(0);
    expect(Number.isNaN(a.summary().p50)).toBe(true);
  });
});

describe("FastWindowRecorder", () => {
  it("measures the engine's step rate on the engine's stamps, merged deliveries included", () => {
    const r = new FastWindowRecorder(2);
    r.startedAt = 0;
    r.endedAt = 2000;
    // Stream 0: a step every 1 ms of engine time; one delivery carries 5 merged steps.
    r.record(0, 1, 10, 100.0, 100_000.5);
    r.record(0, 5, 15, 100.005, 100_005.5);
    r.record(0, 1, 16, 100.006, 100_006.5);
    // Stream 1: seen once in the window: no span.
    r.record(1, 1, 3, 100.002, 100_003);
    const w = pooledWindow([r]);
    expect(w).toMatchObject({ deliveries: 4, merged: 1, tokens: 8, windowMs: 2000 });
    expect(w.engineSpan.tokens).toBe(6);
    expect(w.engineSpan.seconds).toBeCloseTo(0.006, 9);
    expect(w.engineStepsPerSec).toBeCloseTo(1000, 6);
    expect(w.deliveredTokensPerSec).toBe(4);
    expect(w.delay.count).toBe(4);
    expect(w.delay.max).toBeCloseTo(1, 6);
  });

  it("pools windows: delays together, rates over the summed time", () => {
    const a = new FastWindowRecorder(1);
    const b = new FastWindowRecorder(1);
    a.startedAt = 0;
    a.endedAt = 1000;
    b.startedAt = 5000;
    b.endedAt = 6000;
    a.record(0, 1, 1, 10, 10_001);
    a.record(0, 1, 2, 10.01, 10_011);
    b.record(0, 1, 9, 20, 20_003);
    b.record(0, 1, 10, 20.03, 20_033);
    const w = pooledWindow([a, b]);
    expect(w.windowMs).toBe(2000);
    expect(w.tokens).toBe(4);
    expect(w.engineStepsPerSec).toBeCloseTo(2 / 0.04, 6);
    expect(w.delay).toMatchObject({ count: 4, max: 3 });
  });
});

describe("slow-reader figures", () => {
  it("divides the slow window by the baseline", () => {
    const win = (p50: number, p99: number, rate: number, steps: number) => {
      const r = new FastWindowRecorder(1);
      const w = pooledWindow([r]);
      return {
        ...w,
        delay: { ...w.delay, p50, p99 },
        deliveredTokensPerSec: rate,
        engineStepsPerSec: steps,
      };
    };
    expect(slowToBaseline(win(2, 10, 90, 950), win(1, 5, 100, 1000))).toEqual({
      delayP50: 2,
      delayP99: 2,
      deliveredTokensPerSec: 0.9,
      engineStepsPerSec: 0.95,
    });
  });

  it("averages two CPU reports by window length", () => {
    const a = { engine: 1, frontend: 0.5, threads: [{ label: "consumer thread", tid: 7, cpu: 0.4 }] };
    const b = { engine: 0.5, frontend: 0.5, threads: [{ label: "runtime thread", tid: 8, cpu: 0.3 }] };
    const m = averageCpu(a, 3000, b, 1000)!;
    expect(m.engine).toBeCloseTo(0.875, 9);
    expect(m.frontend).toBeCloseTo(0.5, 9);
    expect(m.threads.find((t) => t.tid === 7)!.cpu).toBeCloseTo(0.3, 9);
    expect(m.threads.find((t) => t.tid === 8)!.cpu).toBeCloseTo(0.075, 9);
    expect(averageCpu(undefined, 1, b, 1)).toBe(b);
  });
});
