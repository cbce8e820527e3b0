// Every package.json of the workspace says what is true of it: the Node lines the suite runs on (this test
// runs on each of them), where its source lives, whether importing it has side effects, and whether it is
// published (then `check:pack` checks its tarball).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TEST_NODE_VERSION } from "../test-node.mjs";

const root = new URL("../../..", import.meta.url).pathname;
const REPOSITORY = "git+https://github.com/vllm-engine-core/vllm-engine-core.git";

interface Manifest {
  name: string;
  private?: boolean;
  engines?: { node?: string };
  repository?: { type?: string; url?: string; directory?: string };
  sideEffects?: boolean | string[];
  scripts?: Record<string, string>;
  files?: string[];
}

const read = (dir: string): Manifest => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
const workspace = ["packages", "tools"].flatMap((group) =>
  readdirSync(join(root, group))
    .filter((name) => existsSync(join(root, group, name, "package.json")))
    .map((name) => `${group}/${name}`),
);
const rootManifest = read(".");
const range = rootManifest.engines?.node ?? "";

/** `satisfies("24.22.3", "^20.19.0 || ^24.0.0")`, for the caret ranges `engines` is written in. */
function satisfies(version: string, caretRanges: string): boolean {
  const [major, minor, patch] = version.replace(/^v/, "").split(".").map(Number) as [number, number, number];
  return caretRanges.split("||").some((part) => {
    const m = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    if (!m) throw new Error(`engines range part "${part}" is not of the form ^X.Y.Z`);
    const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
    return major === a && (minor > b || (minor === b && patch >= c));
  });
}

describe("package manifests", () => {
  it("list the Node lines the suite runs on, and only those", () => {
    expect(range).toBe("^20.19.0 || ^24.0.0");
    // The test runs on each line `npm test` uses (tools/scripts/test-runs.mjs): both must be in the range.
    expect(
      satisfies(process.version, range),
      `Node ${process.version} runs the tests but engines says ${range}`,
    ).toBe(true);
    expect(satisfies(TEST_NODE_VERSION, range)).toBe(true);
    expect(satisfies("22.12.0", range)).toBe(false); // not tested, so not claimed
    for (const dir of workspace) expect(read(dir).engines?.node, dir).toBe(range);
  });

  it("name the repository and the package's directory in it", () => {
    expect(rootManifest.repository).toEqual({ type: "git", url: REPOSITORY });
    for (const dir of workspace) {
      expect(read(dir).repository, dir).toEqual({ type: "git", url: REPOSITORY, directory: dir });
    }
  });

  it("declare sideEffects: the codec and the transport are pure; the runtime installs its host on import", () => {
    const sideEffects = Object.fromEntries(workspace.map((dir) => [dir, read(dir).sideEffects]));
    expect(sideEffects["packages/protocol"]).toBe(false);
    expect(sideEffects["packages/transport"]).toBe(false);
    expect(sideEffects["packages/runtime"]).toBe(true);
    // Importing the client on the main thread is how an application installs the runtime host (runtime README).
    expect(sideEffects["packages/client"]).toBe(true);
    for (const dir of workspace) expect(typeof read(dir).sideEffects, dir).toBe("boolean");
  });

  it("pack-check exactly the published packages, and ship the sources their maps point at", () => {
    const published = workspace.filter((dir) => !read(dir).private);
    expect(published.sort()).toEqual([
      "packages/cli",
      "packages/client",
      "packages/config",
      "packages/errors",
      "packages/metrics",
      "packages/protocol",
      "packages/runtime",
      "packages/server",
      "packages/text",
    ]);
    // The CLI is bin-only (nothing to import or type-check as a consumer): its tarball is installed and run by
    // packages/cli/test/pack.test.ts instead, and it ships no declarations (but its sources, for its maps).
    const binOnly = new Set(["packages/cli"]);
    for (const dir of workspace) {
      const manifest = read(dir);
      expect(manifest.scripts?.["check:pack"] !== undefined, dir).toBe(
        !manifest.private && !binOnly.has(dir),
      );
    }
    for (const dir of published) {
      expect(read(dir).files, dir).toEqual(
        binOnly.has(dir)
          ? ["bin", "dist", "src", "!**/*.test.*", "!**/*.d.ts", "!**/*.d.ts.map"]
          : ["dist", "src", "!**/*.test.*"],
      );
    }
  });
});
