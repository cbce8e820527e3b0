// Install hygiene: pnpm links a workspace package's bins into its dependents' node_modules/.bin at install time,
// before anything is built, and warns "Failed to create bin" for a bin that points into dist/. So every bin of
// a package that other workspace packages depend on must be a committed file (the CLI's and the mock engine's
// are shims that import dist/ at run time).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, test } from "vitest";
import { PACKAGE_DIR } from "./helpers.js";

const ROOT = join(PACKAGE_DIR, "..", "..");

interface Manifest {
  name: string;
  bin?: string | Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

test("bins of workspace dependencies (and the CLI's) are committed files, not build output", () => {
  const manifests = new Map<string, { dir: string; manifest: Manifest }>();
  for (const group of ["packages", "tools"]) {
    for (const name of readdirSync(join(ROOT, group))) {
      const dir = join(group, name);
      try {
        manifests.set(dir, {
          dir,
          manifest: JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8")),
        });
      } catch {
        // not a package
      }
    }
  }
  const depended = new Set<string>(["@vllm-engine-core/cli"]);
  for (const { manifest } of manifests.values()) {
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }))
      depended.add(dep);
  }
  const tracked = new Set(execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" }).split("\n"));
  const checked: string[] = [];
  for (const { dir, manifest } of manifests.values()) {
    if (!depended.has(manifest.name) || manifest.bin === undefined) continue;
    const bins = typeof manifest.bin === "string" ? { [manifest.name]: manifest.bin } : manifest.bin;
    for (const [bin, target] of Object.entries(bins)) {
      const path = join(dir, target).replaceAll("\\", "/");
      expect(tracked.has(path), `${manifest.name} bin ${bin} → ${target} must be committed`).toBe(true);
      checked.push(bin);
    }
  }
  expect(checked.sort()).toEqual(["vllm-engine-core", "vllm-mock-engine"]);
});
