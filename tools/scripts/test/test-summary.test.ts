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
interface FakeReport {
  passed: number;
  failed: number;
  skipped?: number;
  testResults?: unknown[];
}
function workspace(reports: Record<string, FakeReport>): string {
  const root = join(work, `ws-${workspaces++}`);
  for (const [path, r] of Object.entries(reports)) {
    const [pkg, file] = path.split(":") as [string, string];
    mkdirSync(join(root, pkg, ".test-results"), { recursive: true });
    const report = {
      numPassedTests: r.passed,
      numFailedTests: r.failed,
      numPendingTests: r.skipped ?? 0,
      testResults: (r.testResults ?? []).map((t) =>
        JSON.parse(JSON.stringify(t).replaceAll("<pkg>", join(root, pkg))),
      ),
    };
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

  it("lists each failed test by package, file, Node and name, with the first lines of its error, above the closing line", () => {
    const root = workspace({
      "tools/reliability:vitest-node20.json": { passed: 3, failed: 0 },
      "tools/reliability:vitest-node24.json": {
        passed: 2,
        failed: 1,
        testResults: [
          {
            name: "<pkg>/test/misuse.test.ts",
            status: "failed",
            message: "",
            assertionResults: [
              { fullName: "misuse passes", status: "passed", failureMessages: [] },
              {
                fullName: "misuse binds again",
                status: "failed",
                failureMessages: [
                  "\u001b[31mError: EADDRINUSE\u001b[39m\n\n    at bind (a.ts:1)\n    at 2\n    at 3\n    at 4\n    at 5\n    at 6",
                ],
              },
            ],
          },
          {
            name: "<pkg>/test/broken.test.ts",
            status: "failed",
            message: "SyntaxError: bad import",
            assertionResults: [],
          },
        ],
      },
    });
    const { lines, ok } = summarize(readReports(root), [20, 24]);
    expect(ok).toBe(false);
    expect(lines.slice(lines.indexOf("failed:"))).toEqual([
      "failed:",
      "  tools/reliability/test/misuse.test.ts (Node 24): misuse binds again",
      "      Error: EADDRINUSE",
      "          at bind (a.ts:1)",
      "          at 2",
      "          at 3",
      "          at 4",
      "          at 5",
      "  tools/reliability/test/broken.test.ts (Node 24): (the file itself)",
      "      SyntaxError: bad import",
      "tests: 5 passed, 1 failed",
    ]);
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
