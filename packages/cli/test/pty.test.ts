// The progress bar needs a terminal: run `bench` under a pseudo-terminal (util-linux `script`, part of every
// Debian image) and look for the redrawn bar; through a pipe the same command prints plain lines instead (see
// bench.test.ts).
import { execFileSync } from "node:child_process";
import { expect, test } from "vitest";
import { CLI_BIN } from "./helpers.js";

test("bench on a terminal draws a live progress bar, redrawn in place, ending at 100%", () => {
  const command = [
    process.execPath,
    CLI_BIN,
    "bench",
    "--mock",
    "--mock-step-ms",
    "5",
    "--num-prompts",
    "12",
    "--input-len",
    "8",
    "--output-len",
    "40",
    "--max-concurrency",
    "3",
  ]
    .map((a) => `'${a}'`)
    .join(" ");
  // -q quiet, -f flush, -e return the command's exit code, -c the command; the typescript goes to /dev/null.
  const output = execFileSync("script", ["-qfec", command, "/dev/null"], {
    encoding: "utf8",
    timeout: 45_000,
    env: { ...process.env, COLUMNS: "100" },
  });
  const redraws = output.split("\r").filter((s) => s.startsWith("bench: "));
  expect(redraws.length, output).toBeGreaterThan(3);
  expect(redraws.some((s) => /^bench: +\d+%\|█*\s*\| \d+\/12 \[/.test(s) && !s.includes("100%"))).toBe(true);
  expect(redraws.at(-1)).toMatch(/^bench: 100%\|█+\| 12\/12 \[[\d.]+s, [\d.]+ req\/s, \d+ tok\/s\]/);
  // No plain progress lines on a terminal, and the summary still follows.
  expect(output).not.toMatch(/requests done \(\d+%\)/);
  expect(output).toContain("============ Serving Benchmark Result ============");
});
