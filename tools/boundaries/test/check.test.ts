// Feeds the check small fixture trees (written to a temp dir per test) and checks what it reports.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { checkBoundaries, type Violation } from "../src/index.ts";

const trees: string[] = [];
afterEach(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true });
});

/** Writes `files` (path → contents) into a fresh directory and returns it. */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "boundaries-fixture-"));
  trees.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const manifest = (deps: Record<string, string> = {}) => JSON.stringify({ name: "x", dependencies: deps });

/** A tree that follows the policy everywhere it can be tested. */
const CLEAN: Record<string, string> = {
  "packages/client/package.json": manifest({ "@vllm-engine-core/runtime": "workspace:*" }),
  "packages/client/src/index.ts":
    'import { openConnection } from "@vllm-engine-core/runtime";\nexport { openConnection };\n',
  "packages/runtime/src/caller/index.ts":
    "// mentions @vllm-engine-core/transport and zeromq only in a comment\nexport const x = 'zeromq';\n",
  "packages/runtime/src/runtime-thread/main.ts":
    'import { connectTransport } from "@vllm-engine-core/transport";\nvoid connectTransport;\n',
  "packages/transport/src/index.ts": 'import * as zmq from "zeromq";\nexport { zmq };\n',
  "packages/transport/test/a.test.ts":
    'import { connectTransport } from "../src/index.ts";\nimport "zeromq";\nvoid connectTransport;\n',
  "tools/mock-engine/src/engine.ts": 'import { Dealer } from "zeromq";\nvoid Dealer;\n',
  "tools/probe/src/floor.ts": 'const zmq = await import("zeromq");\nvoid zmq;\n',
  "tools/demo/src/main.ts": 'import { connect } from "@vllm-engine-core/client";\nvoid connect;\n',
};

const rules = (violations: Violation[]) =>
  violations.map((v) =>
    v.kind === "import"
      ? `${v.rule} ${v.file} ${v.specifier}`
      : `manifest ${v.file} ${v.field} ${v.dependency}`,
  );

describe("checkBoundaries", () => {
  it("accepts a tree that follows the policy", async () => {
    const { violations, scannedFiles } = await checkBoundaries(fixture(CLEAN));
    expect(violations).toEqual([]);
    expect(scannedFiles).toContain("packages/runtime/src/runtime-thread/main.ts");
    expect(scannedFiles).toContain("tools/probe/src/floor.ts");
  });

  it("catches the transport imported outside the runtime worker (client, runtime host, runtime tests)", async () => {
    const root = fixture({
      ...CLEAN,
      "packages/client/src/bad.ts":
        'import { connectTransport } from "@vllm-engine-core/transport";\nvoid connectTransport;\n',
      "packages/runtime/src/caller/bad.ts":
        'import type { TransportConfig } from "@vllm-engine-core/transport";\nexport type C = TransportConfig;\n',
      "packages/runtime/test/bad.test.ts": 'export * from "@vllm-engine-core/transport/internal";\n',
    });
    const { violations } = await checkBoundaries(root);
    expect(rules(violations)).toEqual([
      "transport-outside-runtime-worker packages/client/src/bad.ts @vllm-engine-core/transport",
      "transport-outside-runtime-worker packages/runtime/src/caller/bad.ts @vllm-engine-core/transport",
      "transport-outside-runtime-worker packages/runtime/test/bad.test.ts @vllm-engine-core/transport/internal",
    ]);
  });

  it("catches a relative path that reaches into packages/transport, with a .ts or a NodeNext .js specifier", async () => {
    const root = fixture({
      ...CLEAN,
      "packages/client/src/sneaky.ts":
        'import { connectTransport } from "../../transport/src/index.ts";\nvoid connectTransport;\n',
      "packages/client/src/sneaky-js.ts":
        'import { connectTransport } from "../../transport/src/index.js";\nvoid connectTransport;\n',
    });
    const { violations } = await checkBoundaries(root);
    expect(violations).toMatchObject([
      {
        rule: "transport-outside-runtime-worker",
        file: "packages/client/src/sneaky-js.ts",
        specifier: "../../transport/src/index.js",
        resolved: "packages/transport/src/index.ts",
      },
      {
        rule: "transport-outside-runtime-worker",
        file: "packages/client/src/sneaky.ts",
        specifier: "../../transport/src/index.ts",
        resolved: "packages/transport/src/index.ts",
      },
    ]);
  });

  it("resolves workspace links and installed packages to their real paths, and still catches them", async () => {
    const root = fixture({
      ...CLEAN,
      "packages/transport/package.json": JSON.stringify({
        name: "@vllm-engine-core/transport",
        exports: { ".": { "@vllm-engine-core/source": "./src/index.ts", default: "./dist/index.js" } },
      }),
      "packages/client/node_modules/zeromq/package.json": JSON.stringify({
        name: "zeromq",
        main: "index.js",
      }),
      "packages/client/node_modules/zeromq/index.js": "export {};\n",
      "packages/client/src/linked.ts":
        'import type { T } from "@vllm-engine-core/transport";\nimport "zeromq";\nexport type { T };\n',
    });
    mkdirSync(join(root, "packages/client/node_modules/@vllm-engine-core"));
    symlinkSync("../../../transport", join(root, "packages/client/node_modules/@vllm-engine-core/transport"));
    const { violations } = await checkBoundaries(root);
    expect(violations).toMatchObject([
      {
        rule: "transport-outside-runtime-worker",
        specifier: "@vllm-engine-core/transport",
        resolved: "packages/transport/src/index.ts",
        dependencyTypes: expect.arrayContaining(["type-only"]),
      },
      {
        rule: "zeromq-outside-allowed-code",
        specifier: "zeromq",
        resolved: "packages/client/node_modules/zeromq/index.js",
      },
    ]);
  });

  it("catches zeromq in every import form outside the allowed code", async () => {
    const forms: Record<string, string> = {
      import: 'import * as zmq from "zeromq";\nvoid zmq;\n',
      "import-type": 'import type { Router } from "zeromq";\nexport type { Router };\n',
      "export-from": 'export { Dealer } from "zeromq/v5-compat";\n',
      "dynamic-import": 'const lazy = await import("zeromq");\nvoid lazy;\n',
      require: 'const viaRequire = require("zeromq");\nvoid viaRequire;\n',
      "require-resolve": 'const where = require.resolve("zeromq");\nvoid where;\n',
      "import-equals": 'import zmq = require("zeromq");\nvoid zmq;\n',
      "typeof-import": 'export type T = typeof import("zeromq");\n',
    };
    const root = fixture({
      ...CLEAN,
      ...Object.fromEntries(
        Object.entries(forms).map(([name, text]) => [`packages/client/src/${name}.ts`, text]),
      ),
      "packages/runtime/src/runtime-thread/zmq.ts": 'import { Router } from "zeromq";\nvoid Router;\n', // worker: via transport only
      "tools/demo/src/peek.mjs": 'import("zeromq");\n',
    });
    const { violations } = await checkBoundaries(root);
    const byFile = new Map(violations.map((v) => [v.file, v]));
    for (const name of Object.keys(forms)) {
      expect(byFile.get(`packages/client/src/${name}.ts`), name).toMatchObject({
        rule: "zeromq-outside-allowed-code",
        specifier: expect.stringMatching(/^zeromq/),
      });
    }
    expect(rules(violations).filter((r) => !r.includes("packages/client/src/"))).toEqual([
      "zeromq-outside-allowed-code packages/runtime/src/runtime-thread/zmq.ts zeromq",
      "zeromq-outside-allowed-code tools/demo/src/peek.mjs zeromq",
    ]);
    expect(violations).toHaveLength(Object.keys(forms).length + 2);
  });

  it("ignores module names in comments and ordinary strings", async () => {
    const root = fixture({
      ...CLEAN,
      "packages/client/src/mentions.ts":
        '// import "zeromq"\nexport const s = "zeromq";\n/* require("@vllm-engine-core/transport") */\n',
    });
    expect((await checkBoundaries(root)).violations).toEqual([]);
  });

  it("catches zeromq or the transport declared in the client's package.json", async () => {
    const root = fixture({
      ...CLEAN,
      "packages/client/package.json": JSON.stringify({
        name: "@vllm-engine-core/client",
        dependencies: { zeromq: "6.8.0" },
        devDependencies: { "@vllm-engine-core/transport": "workspace:*" },
      }),
    });
    expect(rules((await checkBoundaries(root)).violations)).toEqual([
      "manifest packages/client/package.json dependencies zeromq",
      "manifest packages/client/package.json devDependencies @vllm-engine-core/transport",
    ]);
  });

  it("catches the runtime or the transport declared in the CLI's package.json", async () => {
    const root = fixture({
      ...CLEAN,
      "packages/cli/package.json": JSON.stringify({
        name: "@vllm-engine-core/cli",
        dependencies: {
          "@vllm-engine-core/client": "workspace:*",
          "@vllm-engine-core/runtime": "workspace:*",
        },
        devDependencies: { "@vllm-engine-core/transport": "workspace:*" },
      }),
    });
    expect(rules((await checkBoundaries(root)).violations)).toEqual([
      "manifest packages/cli/package.json dependencies @vllm-engine-core/runtime",
      "manifest packages/cli/package.json devDependencies @vllm-engine-core/transport",
    ]);
  });

  it("catches zeromq or the transport declared in the config schema's package.json (the client loads it)", async () => {
    const root = fixture({
      ...CLEAN,
      "packages/config/package.json": JSON.stringify({
        name: "@vllm-engine-core/config",
        dependencies: { "@vllm-engine-core/transport": "workspace:*" },
        peerDependencies: { zeromq: "6.8.0" },
      }),
    });
    expect(rules((await checkBoundaries(root)).violations)).toEqual([
      "manifest packages/config/package.json dependencies @vllm-engine-core/transport",
      "manifest packages/config/package.json peerDependencies zeromq",
    ]);
  });

  it("catches the runtime, the transport or zeromq declared in the text package's package.json", async () => {
    const root = fixture({
      ...CLEAN,
      "packages/text/package.json": JSON.stringify({
        name: "@vllm-engine-core/text",
        dependencies: {
          "@vllm-engine-core/client": "workspace:*",
          "@vllm-engine-core/runtime": "workspace:*",
        },
        peerDependencies: { zeromq: "6.8.0" },
      }),
    });
    expect(rules((await checkBoundaries(root)).violations)).toEqual([
      "manifest packages/text/package.json dependencies @vllm-engine-core/runtime",
      "manifest packages/text/package.json peerDependencies zeromq",
    ]);
  });

  it("does not look into build output or node_modules", async () => {
    const root = fixture({
      ...CLEAN,
      "packages/client/dist/index.js": 'import "zeromq";\n',
      "packages/client/src/node_modules/x/index.js": 'import "zeromq";\n',
    });
    expect((await checkBoundaries(root)).violations).toEqual([]);
  });

  it("scans tools' tests too", async () => {
    const root = fixture({ ...CLEAN, "tools/demo/test/t.test.ts": 'import "zeromq";\n' });
    expect((await checkBoundaries(root)).violations.map((v) => v.file)).toEqual([
      "tools/demo/test/t.test.ts",
    ]);
  });
});

describe("the check:boundaries command", () => {
  const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
  const tsx = fileURLToPath(new URL("../node_modules/.bin/tsx", import.meta.url));

  it("exits 1 and names the rule and the import on a bad tree, 0 on a clean one", () => {
    const bad = fixture({ ...CLEAN, "packages/client/src/bad.ts": 'import "zeromq";\n' });
    // tsx keeps a directory of its own in the temp dir (tsx-<uid>): give it one this test removes.
    const env = { ...process.env, TMPDIR: fixture({}) };
    let failure: { status: number; stderr: string } | undefined;
    try {
      execFileSync(tsx, [cli, "--root", bad], { encoding: "utf8", stdio: "pipe", env });
    } catch (error) {
      failure = error as { status: number; stderr: string };
    }
    expect(failure?.status).toBe(1);
    expect(failure?.stderr).toContain(
      "[zeromq-outside-allowed-code] Only the transport opens engine sockets",
    );
    expect(failure?.stderr).toContain('    packages/client/src/bad.ts → "zeromq"\n');

    const out = execFileSync(tsx, [cli, "--root", fixture(CLEAN)], { encoding: "utf8", stdio: "pipe", env });
    expect(out).toContain("no violations");
  }, 120_000); // two processes, each loading tsx and dependency-cruiser: ~4 s of CPU each, more on a busy machine
});
