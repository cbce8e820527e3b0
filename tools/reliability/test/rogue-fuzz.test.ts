// 10 s of rogue output traffic (random frames, bit-flipped / truncated valid messages, extra or missing aux
// frames) mixed with valid outputs of live requests; `pnpm run fuzz --seconds N` runs the same scenario.
import { describe, expect, it } from "vitest";
import { runRogueFuzz } from "../src/rogue-fuzz.ts";

describe("rogue engine fuzz", () => {
  it("10 s of random and mutated output messages: live requests exact, client healthy, nothing uncaught", async () => {
    const seed = Math.floor(Math.random() * 1e9);
    const report = await runRogueFuzz(10, seed);
    console.log(`[reliability] rogue fuzz (seed ${seed}): ${JSON.stringify(report)}`);
    expect(report.uncaught).toEqual([]);
    expect(report.untypedErrors).toEqual([]);
    expect(report.tokenMismatches).toEqual([]);
    // Healthy, or failed only with typed errors (checked above); a fresh request must complete either way.
    expect(report.freshOk).toBe(true);
    expect(report.healthyAtEnd).toBe(true);
    expect(report.stats.sent).toBeGreaterThan(1000);
    expect(report.requests).toBeGreaterThan(10);
    // Undecodable messages are counted (diagnostics) and logged rate-limited: the first one, then at most
    // one summary per 10 s; together the warnings account for every counted message.
    expect(report.diagnostics.undecodable).toBeGreaterThan(0);
    expect(report.diagnostics.undecodable).toBeLessThanOrEqual(report.stats.sent);
    expect(report.diagnostics.lastError).toMatch(/^ProtocolError: /);
    expect(report.droppedWarnings).toBeGreaterThanOrEqual(1);
    expect(report.droppedWarnings).toBeLessThanOrEqual(3); // 10 s of fuzz: first + ≤ 2 summaries
    expect(report.droppedReported).toBe(report.diagnostics.undecodable);
  });
});
