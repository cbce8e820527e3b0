#!/usr/bin/env node
// Sums the vitest JSON reports written by every package's `test` task and prints one closing
// line `tests: N passed, N failed` (exit 1 when anything failed or nothing ran).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("../..", import.meta.url).pathname;
let passed = 0;
let failed = 0;
let skipped = 0;
const perPackage = [];
for (const group of ["packages", "tools"]) {
  const groupDir = join(root, group);
  if (!existsSync(groupDir)) continue;
  for (const name of readdirSync(groupDir)) {
    const report = join(groupDir, name, ".test-results", "vitest.json");
    if (!existsSync(report)) continue;
    const r = JSON.parse(readFileSync(report, "utf8"));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    skipped += r.numPendingTests + (r.numTodoTests ?? 0);
    perPackage.push(`${group}/${name}: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
  }
}
for (const line of perPackage) console.log(`  ${line}`);
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
