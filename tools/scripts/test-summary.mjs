#!/usr/bin/env node
// Sums the vitest JSON reports written by every package's `test` task and prints one closing line
// `tests: N passed, N failed` (exit 1 when anything failed or nothing ran). Each run writes
// `.test-results/vitest-node<major>.json` (vitest.shared.ts), so the runs on two Node lines sit side by side:
// a line per package and Node, a total per Node, then the closing line over all runs.
//
// Arguments: the Node majors that must have run (e.g. `20 24`); a package whose tests ran on one of them but
// not on another fails the summary (named above the closing line), so a run that died half-way cannot pass as a smaller green run.
// Every failed test (and every test file that failed without a test, e.g. on import) is listed by file, name and
// the first lines of its error just above the closing line: CI keeps only the tail of the log.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";

/** The default tier's reports (`npm test`) and the real-engine tier's (`npm run test:vllm`). */
const REPORTS = { default: /^vitest-node(\d+)\.json$/, vllm: /^vitest-vllm-node(\d+)\.json$/ };

/**
 * Every report of `tier` below `root`: `{ pkg, node, passed, failed, skipped }`, sorted by package and Node.
 * The real-engine tier's packages are named `<pkg> (real engine)`.
 */
export function readReports(root, tier = "default") {
  const REPORT = REPORTS[tier];
  const reports = [];
  for (const group of ["packages", "tools"]) {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) continue;
    for (const name of readdirSync(groupDir).sort()) {
      const dir = join(groupDir, name, ".test-results");
      if (!existsSync(dir)) continue;
      for (const file of readdirSync(dir).sort()) {
        const node = REPORT.exec(file)?.[1];
        if (node === undefined) continue;
        const r = JSON.parse(readFileSync(join(dir, file), "utf8"));
        const root = join(groupDir, name);
        reports.push({
          failures: failuresOf(r, root),
          pkg: tier === "default" ? `${group}/${name}` : `${group}/${name} (real engine)`,
          node: Number(node),
          passed: r.numPassedTests,
          failed: r.numFailedTests,
          skipped: r.numPendingTests + (r.numTodoTests ?? 0),
        });
      }
    }
  }
  return reports.sort((a, b) => a.pkg.localeCompare(b.pkg) || a.node - b.node);
}

const FAILURE_LINES = 6;

/** The first lines of an error message, trimmed of colour codes and blank lines. */
function excerpt(message) {
  return (
    String(message ?? "")
      // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest's messages carry ANSI colour codes
      .replace(/\u001b\[[0-9;]*m/g, "")
      .split("\n")
      .map((line) => line.trimEnd())
      .filter((line) => line.trim() !== "")
      .slice(0, FAILURE_LINES)
  );
}

/** `{ file, test, lines }` for each failed test of a vitest JSON report, and each file that failed with no failed test. */
function failuresOf(report, pkgRoot) {
  const failures = [];
  for (const file of report.testResults ?? []) {
    const where = relative(pkgRoot, file.name ?? "");
    const failed = (file.assertionResults ?? []).filter((a) => a.status === "failed");
    for (const a of failed)
      failures.push({ file: where, test: a.fullName, lines: excerpt(a.failureMessages?.[0]) });
    if (failed.length === 0 && file.status === "failed")
      failures.push({ file: where, test: "(the file itself)", lines: excerpt(file.message) });
  }
  return failures;
}

/** The summary lines and whether the whole thing passed. */
export function summarize(reports, expectedNodes = []) {
  const lines = [];
  const count = (rs) =>
    rs.reduce(
      (t, r) => ({
        passed: t.passed + r.passed,
        failed: t.failed + r.failed,
        skipped: t.skipped + r.skipped,
      }),
      { passed: 0, failed: 0, skipped: 0 },
    );
  const fmt = (t) => `${t.passed} passed, ${t.failed} failed${t.skipped ? `, ${t.skipped} skipped` : ""}`;
  for (const r of reports) lines.push(`  ${r.pkg} (Node ${r.node}): ${fmt(r)}`);
  const nodes = [...new Set([...expectedNodes, ...reports.map((r) => r.node)])].sort((a, b) => a - b);
  const missing = [];
  for (const pkg of new Set(reports.map((r) => r.pkg))) {
    for (const node of nodes) {
      if (!reports.some((r) => r.pkg === pkg && r.node === node)) missing.push(`${pkg} (Node ${node})`);
    }
  }
  for (const node of nodes) lines.push(`Node ${node}: ${fmt(count(reports.filter((r) => r.node === node)))}`);
  const failures = reports.flatMap((r) =>
    (r.failures ?? []).map((f) => ({ ...f, pkg: r.pkg, node: r.node })),
  );
  if (failures.length > 0) lines.push("failed:");
  for (const f of failures) {
    lines.push(`  ${f.pkg}/${f.file} (Node ${f.node}): ${f.test}`);
    for (const line of f.lines) lines.push(`      ${line}`);
  }
  if (missing.length > 0) lines.push(`no test report from: ${missing.join(", ")}`);
  const total = count(reports);
  lines.push(`tests: ${fmt(total)}`);
  return { lines, ok: total.failed === 0 && total.passed > 0 && missing.length === 0 };
}

/**
 * `test-summary.mjs 20 24`: the default tier, which must have run on each of these Node majors.
 * `test-summary.mjs --with-tier 20 24`: the same, plus the real-engine tier's reports when there are any
 * (it runs on one Node, so it is left out of the per-Node completeness check); the closing line then counts both.
 */
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = new URL("../..", import.meta.url).pathname;
  const args = process.argv.slice(2);
  const withTier = args.includes("--with-tier");
  const nodes = args.filter((a) => a !== "--with-tier").map(Number);
  const base = summarize(readReports(root), nodes);
  const tier = withTier ? readReports(root, "vllm") : [];
  if (tier.length === 0) {
    if (withTier) console.log("real-engine tier: no report (not run, or ../shared/vllm-cpu absent)");
    for (const line of base.lines) console.log(line);
    process.exit(base.ok ? 0 : 1);
  }
  const tierSummary = summarize(tier);
  const all = summarize([...readReports(root), ...tier]);
  for (const line of base.lines.slice(0, -1)) console.log(line);
  for (const line of tierSummary.lines.filter((l) => !l.startsWith("Node ")).slice(0, -1)) console.log(line);
  console.log(`real-engine tier: ${tierSummary.lines.at(-1).replace(/^tests: /, "")}`);
  console.log(all.lines.at(-1));
  process.exit(base.ok && tierSummary.ok ? 0 : 1);
}
