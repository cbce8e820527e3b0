// The closing line of `npm test` over the runs on two Node lines: the vitest reports each run leaves
// (.test-results/vitest-node<major>.json), read from a workspace laid out here.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readReports, summarize } from "../test-summary.mjs";

const work = mkdtempSync(join(tmpdir(), "test-summary-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let workspaces = 0;
function workspace(reports: Record<string, { passed: number; failed: number; skipped?: number }>): string {
  const root = join(work, `ws-${workspaces++}`);
  for (const [path, r] of Object.entries(reports)) {
    const [pkg, file] = path.split(":") as [string, string];
    mkdirSync(join(root, pkg, ".test-results"), { recursive: true });
    const report = { numPassedTests: r.passed, numFailedTests: r.failed, numPendingTests: r.skipped ?? 0 };
    writeFileSync(join(root, pkg, ".test-results", file), JSON.stringify(report));
  }
  return root;
}

describe("test-summary", () => {
  it("adds up both Node runs, with a line per package and Node and a total per Node", () => {
    const root = workspace({
      "packages/client:vitest-node20.json": { passed: 10, failed: 0 },
      "packages/client:vitest-node24.json": { passed: 10, failed: 0 },
      "tools/scripts:vitest-node20.json": { passed: 3, failed: 0, skipped: 1 },
      "tools/scripts:vitest-node24.json": { passed: 4, failed: 0 },
      "tools/scripts:vitest.json": { passed: 99, failed: 99 }, // an old single-run report: not counted
    });
    const { lines, ok } = summarize(readReports(root), [20, 24]);
    expect(lines).toEqual([
      "  packages/client (Node 20): 10 passed, 0 failed",
      "  packages/client (Node 24): 10 passed, 0 failed",
      "  tools/scripts (Node 20): 3 passed, 0 failed, 1 skipped",
      "  tools/scripts (Node 24): 4 passed, 0 failed",
      "Node 20: 13 passed, 0 failed, 1 skipped",
      "Node 24: 14 passed, 0 failed",
      "tests: 27 passed, 0 failed, 1 skipped",
    ]);
    expect(ok).toBe(true);
  });

  it("fails when a test failed on either Node", () => {
    const root = workspace({
      "packages/client:vitest-node20.json": { passed: 10, failed: 0 },
      "packages/client:vitest-node24.json": { passed: 9, failed: 1 },
    });
    const { lines, ok } = summarize(readReports(root), [20, 24]);
    expect(lines.at(-1)).toBe("tests: 19 passed, 1 failed");
    expect(ok).toBe(false);
  });

  it("fails when a package has no report from one of the Node runs", () => {
    const root = workspace({
      "packages/client:vitest-node20.json": { passed: 10, failed: 0 },
      "packages/client:vitest-node24.json": { passed: 10, failed: 0 },
      "packages/protocol:vitest-node20.json": { passed: 5, failed: 0 },
    });
    const { lines, ok } = summarize(readReports(root), [20, 24]);
    expect(lines).toContain("no test report from: packages/protocol (Node 24)");
    expect(ok).toBe(false);
    // A Node that was expected but reported nothing at all is missing for every package.
    const only20 = workspace({ "packages/client:vitest-node20.json": { passed: 10, failed: 0 } });
    expect(summarize(readReports(only20), [20, 24]).lines).toContain(
      "no test report from: packages/client (Node 24)",
    );
  });

  it("fails when nothing ran", () => {
    expect(summarize(readReports(workspace({})), []).ok).toBe(false);
  });
});
