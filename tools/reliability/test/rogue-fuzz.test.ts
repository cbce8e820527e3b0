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
    // Undecodable messages are reported as warnings (one per message), never more than were sent.
    expect(report.droppedWarnings).toBeGreaterThan(0);
    expect(report.droppedWarnings).toBeLessThanOrEqual(report.stats.sent);
  });
});
