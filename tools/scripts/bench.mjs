#!/usr/bin/env node
// `npm run bench` (through with-pnpm.mjs): builds, then runs every package's bench in turn (turbo). With
// arguments (`npm run bench -- --only vs-vllm`, `-- --quick --skip-probe` …) only tools/bench runs, with
// them: the arguments are its own (`node tools/bench/dist/main.js --help`); the other benches take none.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = process.argv.slice(2);
const run = (command, commandArgs) => {
  const r = spawnSync(command, commandArgs, { stdio: "inherit", cwd: root });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
};

run("turbo", ["run", "build", "--output-logs=errors-only"]);
if (args.length === 0) run("turbo", ["run", "bench", "--concurrency=1"]);
else run(process.execPath, [join(root, "tools", "bench", "dist", "main.js"), ...args]);
