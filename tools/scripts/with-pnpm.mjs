#!/usr/bin/env node
// Entry point for `npm test`, `npm run demo`, `npm run bench`, `npm run probe` on a machine that has
// only Node.js and npm: installs the pnpm version pinned in package.json's `packageManager` into
// ./.tools (with npm), installs the workspace from the committed lockfile, then runs the task.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const task = process.argv[2];
if (!task) {
  console.error("usage: with-pnpm.mjs <root script> [args...]");
  process.exit(2);
}

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const match = /^pnpm@(\d+\.\d+\.\d+)$/.exec(pkg.packageManager ?? "");
if (!match) throw new Error(`package.json packageManager must pin pnpm@x.y.z, got ${pkg.packageManager}`);
const version = match[1];

const toolsDir = join(root, ".tools");
const pnpmEntry = join(toolsDir, "node_modules", "pnpm", "bin", "pnpm.cjs");
const installedVersion = existsSync(pnpmEntry)
  ? JSON.parse(readFileSync(join(toolsDir, "node_modules", "pnpm", "package.json"), "utf8")).version
  : undefined;
if (installedVersion !== version) {
  console.log(`[with-pnpm] installing pnpm@${version} into .tools/ with npm`);
  execFileSync(
    "npm",
    ["install", "--no-save", "--no-audit", "--no-fund", "--prefix", toolsDir, `pnpm@${version}`],
    { stdio: "inherit", cwd: root },
  );
}

// turbo looks up the package manager binary on PATH.
const binDir = join(toolsDir, "node_modules", ".bin");
const env = {
  ...process.env,
  PATH: `${binDir}${delimiter}${process.env.PATH ?? ""}`,
  TURBO_TELEMETRY_DISABLED: "1",
  DO_NOT_TRACK: "1",
};
const pnpm = (args) => {
  const r = spawnSync(process.execPath, [pnpmEntry, ...args], { stdio: "inherit", cwd: root, env });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

pnpm(["install", "--frozen-lockfile", "--reporter=append-only"]);
pnpm(["run", task, ...process.argv.slice(3)]);
