// The temp-directory guard of `npm test`, run as the root task runs it: a real child command that leaves
// (or does not leave) files in the TMPDIR it was given.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const guard = fileURLToPath(new URL("../tmp-guard.mjs", import.meta.url));
const outside = mkdtempSync(join(tmpdir(), "tmp-guard-test-"));
afterAll(() => rmSync(outside, { recursive: true, force: true }));

/** Runs `script` (node -e, fs/os/path in scope) under the guard; it prints the TMPDIR it was given first. */
function guarded(script: string) {
  const prelude =
    "const fs = require('node:fs'), os = require('node:os'), path = require('node:path');" +
    "console.log('TMPDIR=' + process.env.TMPDIR);";
  const r = spawnSync(process.execPath, [guard, process.execPath, "-e", prelude + script], {
    encoding: "utf8",
  });
  const dir = /TMPDIR=(.*)/.exec(r.stdout)?.[1];
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, dir };
}

describe("tmp-guard", () => {
  it("fails a run that leaves files, naming each file and the package whose tests left it", () => {
    const r = guarded(`
      const pkg = path.join(process.env.VEC_TEST_TMPDIR, "pkg-mock-engine");
      fs.mkdirSync(pkg);
      fs.writeFileSync(path.join(pkg, "mock-engine-hs-1a2b3c4d.sock"), "");
      fs.writeFileSync(path.join(os.tmpdir(), "stray.txt"), "");
    `);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("the run left 2 entries in its temp directory");
    expect(r.stderr).toContain("tools/mock-engine (1): mock-engine-hs-1a2b3c4d.sock");
    expect(r.stderr).toContain("outside any package's tests (1): stray.txt");
    // A fresh private directory, removed afterwards: the check itself leaves nothing.
    expect(r.dir).toMatch(/\/vec-test-[^/]+$/);
    expect(existsSync(r.dir!)).toBe(false);
  });

  it("counts a directory left empty, not an empty package directory", () => {
    const r = guarded(`
      fs.mkdirSync(path.join(process.env.VEC_TEST_TMPDIR, "pkg-client"));
      fs.mkdirSync(path.join(os.tmpdir(), "tsx-0"));
    `);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("outside any package's tests (1): tsx-0/");
    expect(r.stderr).not.toContain("packages/client");
  });

  it("passes a run that removes what it created, whatever other processes do in the system temp dir", () => {
    const r = guarded(`
      const own = path.join(os.tmpdir(), "own.sock");
      fs.writeFileSync(own, "");
      fs.rmSync(own);
      fs.writeFileSync(path.join(${JSON.stringify(outside)}, "someone-else.sock"), "");
    `);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("tmp-guard: the run left nothing in its temp directory");
    expect(r.status).toBe(0);
    expect(existsSync(r.dir!)).toBe(false);
  });

  it("keeps Node's module compile cache out of the run's temp dir (pnpm turns it on from Node 22)", () => {
    // enableCompileCache() writes below os.tmpdir() unless NODE_DISABLE_COMPILE_CACHE is set; Node 20 has no
    // compile cache, so there the call is skipped and the run trivially leaves nothing.
    const module = join(outside, "compiled.cjs");
    writeFileSync(module, "module.exports = 42;\n");
    const r = guarded(`
      require("node:module").enableCompileCache?.();
      require(${JSON.stringify(module)});
      require("node:module").flushCompileCache?.();
    `);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("keeps the command's own exit code", () => {
    expect(guarded("process.exit(3)").status).toBe(3);
    const failedAndLeft = guarded(`fs.writeFileSync(path.join(os.tmpdir(), "x"), ""); process.exit(5)`);
    expect(failedAndLeft.status).toBe(5);
    expect(failedAndLeft.stderr).toContain("(1): x");
  });

  it("keeps ipc:// paths short: the directory sits right in a short temp dir", () => {
    const r = guarded("");
    expect(r.dir!.length).toBeLessThanOrEqual(60);
  });
});
