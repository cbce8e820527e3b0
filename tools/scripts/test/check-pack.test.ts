// check-pack.mjs run as `check:pack` runs it (in the package directory, real `pnpm pack`, real publint, attw
// and tsc) on two small packages written here: one packaged right, and the same one with one of each mistake
// the check exists for.
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("../check-pack.mjs", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "check-pack-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Files = Record<string, string>;

const map = (file: string, source: string) =>
  JSON.stringify({ version: 3, file, sources: [source], names: [], mappings: "AAAA" });

function goodPackage(): Files {
  return {
    "package.json": JSON.stringify(
      {
        name: "@fixture/packed",
        version: "1.0.0",
        description: "fixture",
        type: "module",
        license: "Apache-2.0",
        repository: { type: "git", url: "git+https://example.invalid/fixture.git", directory: "fixture" },
        sideEffects: false,
        exports: {
          ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
          "./package.json": "./package.json",
        },
        files: ["dist", "src"],
      },
      null,
      2,
    ),
    "src/index.ts": "export const answer: number = 42;\n",
    "dist/index.js": "export const answer = 42;\n//# sourceMappingURL=index.js.map\n",
    "dist/index.js.map": map("index.js", "../src/index.ts"),
    "dist/index.d.ts": "export declare const answer: number;\n//# sourceMappingURL=index.d.ts.map\n",
    "dist/index.d.ts.map": map("index.d.ts", "../src/index.ts"),
  };
}

function write(name: string, files: Files): string {
  const dir = join(work, name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

function checkPack(dir: string) {
  const r = spawnSync(process.execPath, [script], { cwd: dir, encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe("check-pack", () => {
  it("passes a package whose tarball is right", () => {
    const r = checkPack(write("good", goodPackage()));
    expect(r.output).toContain("@fixture/packed: 6 files; publint --strict, attw esm-only");
    expect(r.status).toBe(0);
  });

  it("names every mistake in the tarball", () => {
    const files = goodPackage();
    const manifest = JSON.parse(files["package.json"]!);
    // publint --strict: the types condition must come first.
    manifest.exports["."] = { default: "./dist/index.js", types: "./dist/index.d.ts" };
    // attw: an ESM entry typed by CommonJS declarations.
    manifest.exports["./legacy"] = { types: "./dist/legacy.d.cts", default: "./dist/legacy.js" };
    manifest.files = ["dist"];
    files["package.json"] = JSON.stringify(manifest, null, 2);
    delete files["src/index.ts"]; // the maps now point at a source that is not shipped
    files["dist/legacy.js"] = "export const legacy = 1;\n";
    files["dist/legacy.d.cts"] = "declare const legacy: number;\nexport = legacy;\n";
    files["dist/index.js"] =
      'export { pad } from "left-pad";\nexport const answer = 42;\n//# sourceMappingURL=index.js.map\n';
    files["dist/index.d.ts"] =
      'export { hidden } from "./hidden.js";\nexport declare const answer: number;\n/** @internal */\nexport declare const secret: number;\n';
    files["dist/hidden.d.ts"] = "export {};\n"; // `hidden` was stripped, the re-export was not
    files["dist/index.test.js"] = "export {};\n";
    const r = checkPack(write("bad", files));
    expect(r.status).toBe(1);
    expect(r.output).toMatch(/publint run --strict reports:[\s\S]*types should be the first/);
    expect(r.output).toMatch(/attw --profile esm-only .*reports:[\s\S]*Masquerading as CJS/);
    expect(r.output).toContain(
      "source map entries name a source that is neither shipped nor embedded in the map",
    );
    expect(r.output).toContain("dist/index.js.map → ../src/index.ts");
    expect(r.output).toContain("dist/index.d.ts: an @internal declaration is published");
    expect(r.output).toContain('dist/index.js: imports "left-pad", which is not in dependencies');
    expect(r.output).toContain("dist/index.test.js: a test file is shipped");
    expect(r.output).toMatch(/do not compile for a consumer[\s\S]*hidden/);
    expect(r.output).toContain('import("@fixture/packed") fails with only the published packages installed');
  });

  it("removes its temp directory when the task is cancelled (turbo signals it when another task fails)", async () => {
    const dir = write("cancelled", goodPackage());
    const ownTmp = mkdtempSync(join(work, "tmp-"));
    const child = spawn(process.execPath, [script], { cwd: dir, env: { ...process.env, TMPDIR: ownTmp } });
    // Wait until the check has made its temp directory and unpacked the tarball into it, then cancel.
    const deadline = Date.now() + 30_000;
    while (!readdirSync(ownTmp).some((d) => existsSync(join(ownTmp, d, "consumer")))) {
      if (Date.now() > deadline) throw new Error("check-pack never unpacked its tarball");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(128 + 15);
    expect(readdirSync(ownTmp)).toEqual([]);
  });

  it("does not pack a private package", () => {
    const files = goodPackage();
    files["package.json"] = JSON.stringify({ ...JSON.parse(files["package.json"]!), private: true });
    const r = checkPack(write("private", files));
    expect(r.status).toBe(0);
    expect(r.output).toContain("@fixture/packed is private and not published; nothing to pack");
  });
});
