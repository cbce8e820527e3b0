// Priority 5: leaks. The measured scenario (src/leak-scenario.ts) runs in a child `node --expose-gc`
// process on the built dist/leak-child.mjs, so /proc/self/fd, /proc/self/task and the heap are its own.
// CI size: 200 aborted connects, 10,000 streams opened and dropped, 1,000 utility calls in flight at once.
// The stress script runs the same scenario with 10,000 of each.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { LeakReport } from "../src/leak-scenario.ts";
import { describeSample, mb } from "../src/resources.ts";

const entry = fileURLToPath(new URL("../dist/leak-child.mjs", import.meta.url));

export async function runLeakChild(args: string[]): Promise<LeakReport> {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run the package's build first`);
  const child = spawn(process.execPath, ["--expose-gc", entry, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`leak child exited with ${code}:\n${stderr}`);
  process.stdout.write(stderr.replace(/^/gm, "  "));
  return JSON.parse(stdout.trim().split("\n").pop()!) as LeakReport;
}

describe("leaks", () => {
  it("aborted connects, dropped streams and utility bursts leave fds, threads and heap where they were", async () => {
    const report = await runLeakChild([
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
    const { before, during, after } = report;
    console.log(
      [
        `[reliability] leak check (seed ${report.seed}):`,
        `  before: ${describeSample(before)}`,
        `  during: ${describeSample(during)} (keeper connection open)`,
        `  after:  ${describeSample(after)}`,
        `  heap delta ${mb(after.heapUsed - before.heapUsed)}, rss delta ${mb(after.rss - before.rss)}`,
        `  connects by stage: ${JSON.stringify(report.connectKinds)}`,
        `  streams by mode: ${JSON.stringify(report.streamModes)}; collected ${report.streamsCollected}`,
        `  durations: ${JSON.stringify(report.durationsMs)}`,
      ].join("\n"),
    );
    expect(report.errors).toEqual([]);
    const attempts = Object.values(report.connectKinds).reduce((n, k) => n + k.attempts, 0);
    expect(attempts).toBe(200);
    for (const [kind, k] of Object.entries(report.connectKinds)) {
      // Only an abort at a random moment against a live engine may lose the race and connect first.
      if (kind !== "random-moment") expect(k.aborted, kind).toBe(k.attempts);
    }
    expect(report.utilitiesOk).toBe(1000);
    // Every dropped stream object was garbage-collected: nothing keeps a reference to it.
    expect(report.streamsCollected).toBe(10_000);
    // Margins: the runtime retired and every child process is gone, so fds and threads are back exactly
    // (one of slack each); the heap may keep a little compiled code and caches, far less than 10,000 of
    // anything (3 MB is 300 bytes per dropped stream).
    expect(after.fds).toBeLessThanOrEqual(before.fds + 1);
    expect(after.threads).toBeLessThanOrEqual(before.threads + 1);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(3 * 1024 * 1024);
    expect(after.external - before.external).toBeLessThan(1024 * 1024);
  }, 180_000);
});
