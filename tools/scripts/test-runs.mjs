#!/usr/bin/env node
// The test half of `npm test`: runs every package's tests (`turbo run test`, one package at a time, under
// tmp-guard.mjs) once on the Node that runs this script and once more on TEST_NODE_VERSION (test-node.mjs),
// then adds up both runs' vitest reports into one closing line (test-summary.mjs). The build is shared: the
// second run finds turbo's build cache, since the build output does not depend on the Node version.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureTestNode, TEST_NODE_VERSION } from "./test-node.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const here = dirname(fileURLToPath(import.meta.url));
const turbo = join(root, "node_modules", ".bin", "turbo");
const major = (version) => version.replace(/^v/, "").split(".")[0];

/** Reports of an earlier run would be counted again: every run starts from none. */
function removeReports() {
  for (const group of ["packages", "tools"]) {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) continue;
    for (const name of readdirSync(groupDir)) {
      rmSync(join(groupDir, name, ".test-results"), { recursive: true, force: true });
    }
  }
}

/** Runs the test task on the Node binary `nodePath`, also first on PATH: turbo, pnpm and vitest use it. */
function runTests(label, nodePath) {
  const env = { ...process.env, PATH: `${dirname(nodePath)}${delimiter}${process.env.PATH ?? ""}` };
  console.log(`\n[test-runs] ${label}: turbo run test`);
  const started = Date.now();
  const r = spawnSync(
    nodePath,
    [
      join(here, "tmp-guard.mjs"),
      turbo,
      "run",
      "test",
      "--concurrency=1",
      "--output-logs=new-only",
      // A failing package does not stop the others: the summary counts every package's tests.
      "--continue=dependencies-successful",
    ],
    { stdio: "inherit", cwd: root, env },
  );
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`[test-runs] ${label}: exit ${r.status ?? r.signal} after ${seconds} s`);
  return { label, ok: r.status === 0, seconds };
}

const twice = major(process.version) !== major(TEST_NODE_VERSION);
// Installed before the first run, so that a failing install fails fast.
const secondNode = twice ? ensureTestNode() : undefined;
if (!twice)
  console.log(`[test-runs] this Node is already ${major(TEST_NODE_VERSION)}.x: the suite runs once`);
removeReports();
const runs = [runTests(`Node ${process.versions.node}`, process.execPath)];
if (secondNode !== undefined) runs.push(runTests(`Node ${TEST_NODE_VERSION}`, join(secondNode, "node")));
const expected = [...new Set([major(process.version), major(TEST_NODE_VERSION)])];
for (const run of runs)
  console.log(`[test-runs] ${run.label}: ${run.ok ? "passed" : "FAILED"} in ${run.seconds} s`);
const summary = spawnSync(process.execPath, [join(here, "test-summary.mjs"), ...expected], {
  stdio: "inherit",
  cwd: root,
});
process.exit(runs.every((r) => r.ok) && summary.status === 0 ? 0 : 1);
