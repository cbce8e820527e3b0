// 10 s of rogue output traffic (random frames, bit-flipped / truncated valid messages, extra or missing aux
// frames) mixed with valid outputs of live requests; `pnpm run fuzz --seconds N` runs the same scenario.
// First half: only the fuzzed messages that decode (must fail nothing). Second half: anything, in rounds
// against a fresh engine each, since garbage now kills its engine (src/rogue-fuzz.ts).
import { describe, expect, it } from "vitest";
import { runRogueFuzz } from "../src/rogue-fuzz.ts";

describe("rogue engine fuzz", () => {
  it("10 s of random and mutated output messages: no stream hangs or gets a wrong token, errors typed, nothing uncaught", async () => {
    const seed = Math.floor(Math.random() * 1e9);
    const report = await runRogueFuzz(10, seed);
    console.log(`[reliability] rogue fuzz (seed ${seed}): ${JSON.stringify(report)}`);
    expect(report.uncaught).toEqual([]);
    expect(report.untypedErrors).toEqual([]);
    const { decodable, undecodable } = report;
    for (const phase of [decodable, undecodable]) {
      expect(phase.tokenMismatches).toEqual([]);
      expect(phase.hung).toEqual([]);
      expect(phase.failFastViolations).toEqual([]);
      expect(phase.freshOk).toBe(true);
    }
    // Well-formed but unexpected traffic fails nothing and changes no health.
    expect(decodable.stats.sent).toBeGreaterThan(500);
    expect(decodable.requests).toBeGreaterThan(5);
    expect(decodable.failedBy).toEqual({});
    expect(decodable.healthyAtEnd).toBe(true);
    expect(decodable.diagnostics.undecodable).toBe(0);
    // Anything goes: engines die of it, and each death is a ProtocolError.
    expect(undecodable.rounds).toBeGreaterThanOrEqual(2);
    expect(undecodable.deadRounds).toBeGreaterThanOrEqual(1);
    expect(undecodable.diagnostics.enginesDead).toBe(undecodable.deadRounds);
    expect(undecodable.diagnostics.undecodable).toBeGreaterThan(0);
    expect(undecodable.diagnostics.undecodable).toBeLessThanOrEqual(undecodable.stats.sent);
    for (const name of Object.keys(undecodable.failedBy))
      expect(name).toMatch(/^ProtocolError:PROTOCOL_ERROR:/);
    // Undecodable messages are counted (diagnostics) and logged rate-limited per connection: the first one,
    // then at most one summary per 10 s (and one when it closes); the warnings account for every one.
    expect(report.droppedWarnings).toBeGreaterThanOrEqual(undecodable.deadRounds);
    expect(report.droppedWarnings).toBeLessThanOrEqual(2 * undecodable.rounds);
    expect(report.droppedReported).toBe(undecodable.diagnostics.undecodable);
  });
});
