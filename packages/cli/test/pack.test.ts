// The published package works from its tarball: pack the CLI and the workspace packages it depends on (pnpm
// pack turns `workspace:*` into versions; the private mock engine is bundled into the CLI's dist/), pack the
// registry dependencies from the local store (zeromq and its two dependencies), install all tarballs into an
// empty folder with npm --offline (no network), then run `npx vllm-engine-core` from there.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { PACKAGE_DIR } from "./helpers.js";

const ROOT = join(PACKAGE_DIR, "..", "..");
const WORKSPACE_PACKAGES = ["packages/protocol", "packages/runtime", "packages/client", "packages/cli"];

function pnpmEntry(): string {
  const fromScript = process.env.npm_execpath;
  if (fromScript?.endsWith("pnpm.cjs")) return fromScript;
  const pinned = join(ROOT, ".tools", "node_modules", "pnpm", "bin", "pnpm.cjs");
  if (!existsSync(pinned)) throw new Error(`pnpm not found (npm_execpath=${fromScript}, ${pinned} missing)`);
  return pinned;
}

/** The installed directory of `name` as Node resolves it from `from` (its node_modules, then the parents'). */
function packageDir(name: string, from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name, "package.json");
    if (existsSync(candidate)) return dirname(realpathSync(candidate));
    if (dirname(dir) === dir) throw new Error(`${name} is not installed for ${from}`);
  }
}

const work = mkdtempSync(join(tmpdir(), "vllm-engine-core-cli-pack-"));
const tarballs = join(work, "tarballs");
const app = join(work, "app");
const env = {
  ...process.env,
  npm_config_cache: join(work, "npm-cache"),
  npm_config_update_notifier: "false",
};

beforeAll(() => {
  mkdirSync(tarballs);
  mkdirSync(app);
  for (const pkg of WORKSPACE_PACKAGES) {
    execFileSync(process.execPath, [pnpmEntry(), "pack", "--pack-destination", tarballs], {
      cwd: join(ROOT, pkg),
      stdio: "pipe",
    });
  }
  const zeromq = packageDir("zeromq", join(ROOT, "packages", "runtime"));
  const registryDeps = [zeromq, packageDir("cmake-ts", zeromq), packageDir("node-addon-api", zeromq)];
  execFileSync("npm", ["pack", "--silent", "--pack-destination", tarballs, ...registryDeps], {
    stdio: "pipe",
    env,
  });
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "empty-app", private: true })}\n`);
  const files = readdirSync(tarballs).map((f) => join(tarballs, f));
  execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", ...files], {
    cwd: app,
    stdio: "pipe",
    env,
  });
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

function npx(args: string[]): string {
  return execFileSync("npx", ["--offline", "vllm-engine-core", ...args], {
    cwd: app,
    encoding: "utf8",
    env,
    timeout: 30_000,
  });
}

test("the CLI tarball holds the bin shim, dist/ with the bundled mock engine, and no workspace: ranges", () => {
  const listing = execFileSync("tar", ["tzf", join(tarballs, "vllm-engine-core-cli-0.1.0.tgz")], {
    encoding: "utf8",
  });
  for (const file of ["bin/vllm-engine-core.js", "dist/bin.js", "dist/mock-engine/main.js", "README.md"]) {
    expect(listing).toContain(`package/${file}`);
  }
  expect(listing).not.toMatch(/\.test\.|\.d\.ts/);
  const manifest = execFileSync(
    "tar",
    ["xzf", join(tarballs, "vllm-engine-core-cli-0.1.0.tgz"), "-O", "package/package.json"],
    {
      encoding: "utf8",
    },
  );
  expect(manifest).not.toContain("workspace:");
});

test("npx vllm-engine-core --help works from the installed tarball", () => {
  const out = npx(["--help"]);
  expect(out).toMatch(/^usage: vllm-engine-core <command> \[flags\]$/m);
  expect(npx(["bench", "--help"])).toMatch(/--request-rate R/);
});

test("npx vllm-engine-core --mock commands run the bundled mock engine", () => {
  const [info] = npx(["info", "--mock", "--json"]).trim().split("\n");
  expect(JSON.parse(info!)).toMatchObject({ engineCount: 1, engines: [{ vllmVersion: "0.26.0.dev0+mock" }] });
  const lines = npx(["generate", "--mock", "--prompt-token-ids", "1,2", "--max-tokens", "3", "--json"])
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { newTokenIds: number[]; finishReason: string | null });
  expect(lines.flatMap((l) => l.newTokenIds)).toHaveLength(3);
  expect(lines.at(-1)!.finishReason).toBe("length");
});
