// Priority 5: leaks. The measured scenario (src/leak-scenario.ts) runs in a child `node --expose-gc`
// process on the built dist/leak-child.mjs, so /proc/self/fd, /proc/self/task and the heap are its own.
// CI size: 200 aborted connects, 10,000 streams opened and dropped, 1,000 utility calls in flight at once.
// The stress script runs the same scenario with 10,000 connects (and more utility calls).
import { describe, expect, it } from "vitest";
import { runLeakChild } from "../src/leak-run.ts";
import { leakSummary, leakViolations } from "../src/leak-verdict.ts";

describe("leaks", () => {
  it("aborted connects, dropped streams and utility bursts leave fds, threads and heap where they were", async () => {
    const report = await runLeakChild(new URL("../dist/leak-child.mjs", import.meta.url), [
      "--connects",
      "200",
      "--connects-without-keeper",
      "30",
      "--connects-with-engine",
      "16",
      "--streams",
      "10000",
      "--utilities",
      "1000",
    ]);
    console.log(`[reliability] ${leakSummary(report)}`);
    expect(report.options).toEqual({
      connects: 200,
      connectsWithoutKeeper: 30,
      connectsWithEngine: 16,
      streams: 10_000,
      utilities: 1_000,
    });
    expect(leakViolations(report)).toEqual([]);
    // The scenario really ran: the keeper connection held sockets, threads and streams while it was open.
    expect(report.during.threads).toBeGreaterThan(report.before.threads);
    expect(report.during.fds).toBeGreaterThan(report.before.fds);
  }, 180_000);
});
