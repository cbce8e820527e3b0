// The benchmark's arithmetic against values computed with numpy / vLLM's formulas by hand: percentiles
// (numpy's linear method), TPOT = (e2e − ttft) / (output tokens − 1), the one-second peak buckets, vLLM's
// arrival rescaling, the random dataset's length ranges and the centred section rules of the summary.
import { describe, expect, test } from "vitest";
import { arrivalOffsets } from "../src/bench/arrivals.js";
import { sampleRandomDataset } from "../src/bench/dataset.js";
import { calculateMetrics, percentile, type RequestRecord, std } from "../src/bench/metrics.js";
import { SeededRandom } from "../src/bench/random.js";
import { formatSummary } from "../src/bench/summary.js";

function record(startTime: number, ttft: number, itl: number[], promptLen = 10): RequestRecord {
  return {
    promptLen,
    expectedOutputLen: itl.length + 1,
    success: true,
    error: "",
    startTime,
    ttft,
    itl,
    latency: ttft + itl.reduce((a, b) => a + b, 0),
    outputTokens: itl.length + 1,
  };
}

describe("metrics", () => {
  test("percentile is numpy's linear interpolation; std is the population std", () => {
    const xs = [1, 2, 3, 4, 10];
    expect(percentile(xs, 50)).toBe(3); // np.percentile([1,2,3,4,10], 50)
    expect(percentile(xs, 99)).toBeCloseTo(9.76, 10); // 4 + 0.96 * 6
    expect(percentile(xs, 25)).toBe(2);
    expect(percentile([], 99)).toBe(0);
    expect(std([1, 2, 3, 4])).toBeCloseTo(Math.sqrt(1.25), 12); // np.std
  });

  test("TPOT, ITL, E2E, throughput and peaks as calculate_metrics computes them", () => {
    const records = [record(0, 0.1, [0.02, 0.02, 0.02]), record(0.5, 0.2, [0.04]), record(1.2, 0.1, [])];
    records.push({ ...record(0, 0, []), success: false, error: "boom", outputTokens: 0 });
    const m = calculateMetrics(records, 2, [99]);
    expect(m.completed).toBe(3);
    expect(m.failed).toBe(1);
    expect(m.totalOutput).toBe(4 + 2 + 1);
    expect(m.totalInput).toBe(30);
    expect(m.outputThroughput).toBe(7 / 2);
    expect(m.requestThroughput).toBe(3 / 2);
    // TPOT only for requests with more than one token: (0.16 − 0.1) / 3 and (0.24 − 0.2) / 1.
    expect(m.stats.tpot.mean).toBeCloseTo(((0.06 / 3 + 0.04) / 2) * 1000, 9);
    expect(m.stats.itl.median).toBeCloseTo(20, 9); // [20, 20, 20, 40]
    expect(m.stats.e2el.mean).toBeCloseTo(((0.16 + 0.24 + 0.1) / 3) * 1000, 9);
    expect(m.stats.ttft.percentiles[0]![0]).toBe(99);
    // Chunks at 0.10,0.12,0.14,0.16 | 0.70,0.74 | 1.30: second 0 holds 6, second 1 holds 1.
    expect(m.maxOutputTokensPerS).toBe(6);
    expect(m.maxConcurrentRequests).toBe(2);
  });
});

describe("arrivals", () => {
  test("inf sends everything at once; a finite rate ends at exactly n / rate (vLLM's rescaling)", () => {
    expect(arrivalOffsets(4, Number.POSITIVE_INFINITY, 1, new SeededRandom(0))).toEqual([0, 0, 0, 0]);
    const offsets = arrivalOffsets(50, 10, 1, new SeededRandom(1));
    expect(offsets.at(-1)).toBeCloseTo(5, 12);
    expect(offsets.every((t, i) => i === 0 || t >= offsets[i - 1]!)).toBe(true);
    const even = arrivalOffsets(4, 2, Number.POSITIVE_INFINITY, new SeededRandom(1));
    expect(even.map((t) => Number(t.toFixed(12)))).toEqual([0.5, 1, 1.5, 2]);
  });

  test("gamma intervals have the requested mean", () => {
    const rng = new SeededRandom(5);
    for (const shape of [0.5, 1, 3]) {
      const xs = Array.from({ length: 20_000 }, () => rng.gamma(shape, 2));
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      expect(mean).toBeGreaterThan(2 * shape * 0.95);
      expect(mean).toBeLessThan(2 * shape * 1.05);
    }
  });
});

describe("random dataset", () => {
  test("lengths in [len·(1−r), len·(1+r)], tokens (offset + index + j) mod vocab, reproducible", () => {
    const config = { numPrompts: 200, inputLen: 100, outputLen: 10, rangeRatio: 0.2, vocabSize: 1000 };
    const a = sampleRandomDataset(config, new SeededRandom(9));
    const b = sampleRandomDataset(config, new SeededRandom(9));
    expect(a).toEqual(b);
    for (const r of a) {
      expect(r.promptTokenIds.length).toBeGreaterThanOrEqual(80);
      expect(r.promptTokenIds.length).toBeLessThanOrEqual(120);
      expect(r.outputLen).toBeGreaterThanOrEqual(8);
      expect(r.outputLen).toBeLessThanOrEqual(12);
      const first = r.promptTokenIds[0]!;
      expect(r.promptTokenIds).toEqual(r.promptTokenIds.map((_, j) => (first + j) % 1000));
    }
    expect(new Set(a.map((r) => r.promptTokenIds.length)).size).toBeGreaterThan(20);
    const fixed = sampleRandomDataset({ ...config, rangeRatio: 0 }, new SeededRandom(9));
    expect(fixed.every((r) => r.promptTokenIds.length === 100 && r.outputLen === 10)).toBe(true);
  });
});

test("summary: Python's centred rules and {:<40} {:<10} rows", () => {
  const m = calculateMetrics([record(0, 0.1, [0.02])], 1, [99]);
  const text = formatSummary(m, {
    maxConcurrency: null,
    requestRate: 4,
    durationS: 1,
    selectedMetrics: ["tpot"],
  });
  const lines = text.split("\n");
  expect(lines[0]).toBe("============ Serving Benchmark Result ============");
  expect(lines).toContain("Request rate configured (RPS):           4.00");
  expect(lines).toContain("-----Time per Output Token (excl. 1st token)------");
  expect(lines).not.toContain("---------------Time to First Token----------------");
  expect(lines.some((l) => l.startsWith("Maximum request concurrency:"))).toBe(false);
  expect(lines.every((l) => l.length <= 51)).toBe(true);
});
