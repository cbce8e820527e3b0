// The slow-reader scenario for real (built dist, mock engine child process, runtime and consumer
// threads), briefly and with few streams: checks the shape of its result, never its timing.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { SlowReaderMemory } from "../src/types.js";

const scenarioMain = fileURLToPath(new URL("../dist/scenario-main.js", import.meta.url));

describe("memory-slow-reader scenario", () => {
  it("reports the fast streams' delay and rates per window, the ratios and the memory samples", async () => {
    expect(
      existsSync(scenarioMain),
      "build the bench first (pnpm --filter @vllm-engine-core/bench build)",
    ).toBe(true);
    const config = {
      streams: 8,
      slowReadEveryMs: 50,
      durationMs: 1200,
      baselineMs: 600,
      warmupMs: 200,
      maxWarmupMs: 3000,
    };
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--expose-gc", scenarioMain, "memory-slow-reader", JSON.stringify(config)],
      { timeout: 60_000 },
    );
    const r = JSON.parse(stdout.trim().split("\n").pop()!) as SlowReaderMemory;
    expect(r).toMatchObject({ fastStreams: 8, slowReadEveryMs: 50, durationMs: 1200, baselineMs: 600 });
    expect(r.warmup).toMatchObject({ minMs: 200, maxMs: 3000 });
    expect(r.warmup.ms).toBeGreaterThanOrEqual(200);
    for (const name of ["baselineBefore", "slow", "baselineAfter", "baseline"] as const) {
      const w = r.fast[name];
      expect(w.windowMs, name).toBeGreaterThan(0);
      expect(w.deliveries, name).toBeGreaterThan(0);
      expect(w.tokens, name).toBeGreaterThanOrEqual(w.deliveries);
      expect(w.delay.count, name).toBe(w.deliveries);
      expect(w.delay.p50, name).toBeLessThanOrEqual(w.delay.p99);
      expect(w.delay.p99, name).toBeLessThan(60_000);
      expect(w.deliveredTokensPerSec, name).toBeGreaterThan(0);
      expect(w.engineStepsPerSec, name).toBeGreaterThan(0);
    }
    expect(r.fast.baseline.deliveries).toBe(
      r.fast.baselineBefore.deliveries + r.fast.baselineAfter.deliveries,
    );
    for (const ratio of Object.values(r.ratios)) {
      expect(Number.isFinite(ratio)).toBe(true);
      expect(ratio).toBeGreaterThan(0);
    }
    // Memory samples at both edges of every window; the slow stream was read and lagged.
    expect(r.samples.length).toBeGreaterThanOrEqual(2);
    expect(r.baselineSamples.length).toBeGreaterThanOrEqual(4);
    expect(r.rssStart).toBeGreaterThan(0);
    expect(r.rssEnd).toBeGreaterThan(0);
    expect(r.slowReads).toBeGreaterThan(0);
    expect(r.slowTokens).toBeGreaterThanOrEqual(r.slowReads);
    expect(r.slowBufferedTokens).toBeGreaterThan(0);
    expect(r.fastTokens).toBe(r.fast.slow.tokens);
  }, 90_000);
});
