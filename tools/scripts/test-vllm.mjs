#!/usr/bin/env node
// The test half of `npm run test:vllm`: the real-engine tier (tools/real-engine/test/vllm, vLLM's own engine
// core with the model-free executor of tools/vllm-executor), once, on the Node that runs this script. Earlier
// tier reports are removed first, then `turbo run test:vllm`, then the tier's summary: one line per package,
// the failures, and `real-engine tier: N passed, N failed, N skipped`. Each tier file skips, saying why in one
// line, where no vLLM can be found or set up (tools/real-engine/src/kit.ts).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { readReports, summarize } from "./test-summary.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
for (const group of ["packages", "tools"]) {
  for (const name of existsSync(join(root, group)) ? readdirSync(join(root, group)) : []) {
    const dir = join(root, group, name, ".test-results");
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir)) {
      if (file.startsWith("vitest-vllm-")) rmSync(join(dir, file), { force: true });
    }
  }
}
const started = Date.now();
const r = spawnSync(
  join(root, "node_modules", ".bin", "turbo"),
  ["run", "test:vllm", "--concurrency=1", "--output-logs=new-only"],
  { stdio: "inherit", cwd: root },
);
console.log(`[test-vllm] exit ${r.status ?? r.signal} after ${Math.round((Date.now() - started) / 1000)} s`);
const reports = readReports(root, "vllm");
if (reports.length === 0) {
  console.log("real-engine tier: no report was written");
  process.exit(1);
}
const { lines, ok } = summarize(reports);
for (const line of lines.slice(0, -1)) if (!line.startsWith("Node ")) console.log(line);
console.log(`real-engine tier: ${lines.at(-1).replace(/^tests: /, "")}`);
process.exit(r.status === 0 && ok ? 0 : 1);
