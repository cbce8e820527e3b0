#!/usr/bin/env node
// Runs a command (npm test: `turbo run test`) with TMPDIR pointed at a fresh private directory and fails
// when the command leaves anything in it: every socket file, temp file or directory a test, the mock engine
// or a tool creates must be removed by whoever created it. The directory is new and 0700, so every entry in
// it is the run's own and nothing else on the machine can make the check fail. It is removed at the end, so
// the check itself leaves nothing behind either.
//
// vitest.shared.ts gives each package's tests a subdirectory `pkg-<package dir>` (VEC_TEST_TMPDIR tells it
// where), so the report names the package whose tests left a file.
import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PACKAGE_DIR_PREFIX = "pkg-";
/**
 * ipc:// paths must stay below the ~107-byte Unix socket path limit: under a long TMPDIR (macOS's
 * /var/folders/...) the directory goes to /tmp instead.
 */
const MAX_BASE_LENGTH = 40;
const MAX_NAMES_PER_LINE = 30;

/** Every entry below `dir` as a path relative to it (a directory only when it is empty). */
export function listEntries(dir, prefix = "") {
  const entries = [];
  for (const name of readdirSync(dir).sort()) {
    const relative = prefix + name;
    const path = join(dir, name);
    if (lstatSync(path).isDirectory()) {
      const inner = listEntries(path, `${relative}/`);
      entries.push(...(inner.length > 0 ? inner : [`${relative}/`]));
    } else {
      entries.push(relative);
    }
  }
  return entries;
}

/** "packages/client" for `pkg-client` when that package exists here, else the bare name. */
function packageLabel(dirName) {
  for (const group of ["packages", "tools"]) {
    if (existsSync(join(root, group, dirName, "package.json"))) return `${group}/${dirName}`;
  }
  return dirName;
}

/** Entries in `after` and not in `before`, grouped by the package whose tests own the subdirectory. */
export function leftovers(before, after) {
  const known = new Set(before);
  const byOwner = new Map();
  for (const entry of after) {
    if (known.has(entry)) continue;
    const [first, ...rest] = entry.split("/");
    const packageScoped = first.startsWith(PACKAGE_DIR_PREFIX) && rest.length > 0;
    // An empty package directory is the scope itself, not something left behind.
    if (packageScoped && rest.join("/") === "") continue;
    const owner = packageScoped
      ? packageLabel(first.slice(PACKAGE_DIR_PREFIX.length))
      : "outside any package's tests";
    const name = packageScoped ? rest.join("/") : entry;
    if (!byOwner.has(owner)) byOwner.set(owner, []);
    byOwner.get(owner).push(name);
  }
  return byOwner;
}

/** One line per owner naming its files. */
export function describeLeftovers(byOwner) {
  const total = [...byOwner.values()].reduce((n, names) => n + names.length, 0);
  const lines = [
    `tmp-guard: the run left ${total} ${total === 1 ? "entry" : "entries"} in its temp directory; ` +
      "whoever creates a file or an ipc:// socket there must remove it:",
  ];
  for (const [owner, names] of byOwner) {
    const shown = names.slice(0, MAX_NAMES_PER_LINE).join(", ");
    const more = names.length > MAX_NAMES_PER_LINE ? ` and ${names.length - MAX_NAMES_PER_LINE} more` : "";
    lines.push(`tmp-guard:   ${owner} (${names.length}): ${shown}${more}`);
  }
  return lines.join("\n");
}

function guardBase() {
  const base = tmpdir();
  return base.length > MAX_BASE_LENGTH && existsSync("/tmp") ? "/tmp" : base;
}

/** Runs `command` under a fresh TMPDIR; resolves with the exit code (1 when it left anything behind). */
export async function runGuarded(command, args) {
  const dir = mkdtempSync(join(guardBase(), "vec-test-"));
  const before = listEntries(dir);
  const child = spawn(command, args, {
    stdio: "inherit",
    // From Node 22 on, pnpm turns on Node's module compile cache, which lives below os.tmpdir(): it is no
    // test's file, and a cache shared by runs would defeat the fresh directory. (turbo.json passes the
    // variable through to the test tasks.)
    env: { ...process.env, TMPDIR: dir, VEC_TEST_TMPDIR: dir, NODE_DISABLE_COMPILE_CACHE: "1" },
  });
  // Ctrl-C reaches the child through the terminal; a signal sent to this process alone is passed on.
  const forward = (signal) => child.kill(signal);
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const signal of signals) process.on(signal, forward);
  const code = await new Promise((resolve) => {
    child.once("error", (error) => {
      console.error(`tmp-guard: cannot run ${command}: ${error.message}`);
      resolve(127);
    });
    child.once("close", (exitCode) => resolve(exitCode ?? 1));
  });
  for (const signal of signals) process.off(signal, forward);
  const left = leftovers(before, listEntries(dir));
  rmSync(dir, { recursive: true, force: true });
  if (left.size > 0) {
    console.error(describeLeftovers(left));
    return code === 0 ? 1 : code;
  }
  console.log("tmp-guard: the run left nothing in its temp directory");
  return code;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    console.error("usage: tmp-guard.mjs <command> [args...]");
    process.exit(2);
  }
  process.exit(await runGuarded(command, args));
}
