// Bundles the private mock engine (tools/mock-engine: the launcher and the child-process entry) into
// dist/mock-engine/ so that `--mock` and `mock-engine` work from the published package, which cannot
// depend on an unpublished workspace package. The protocol is inlined (resolved to its TypeScript source,
// as in tests); zeromq stays external (a native addon and a dependency of this package). The launcher runs
// main.js from its own directory, so both entries must land side by side.
import { build } from "esbuild";

const mockEngineSrc = new URL("../../../tools/mock-engine/src/", import.meta.url);
await build({
  entryPoints: {
    index: new URL("index.ts", mockEngineSrc).pathname,
    main: new URL("main.ts", mockEngineSrc).pathname,
  },
  outdir: new URL("../dist/mock-engine/", import.meta.url).pathname,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: false,
  conditions: ["@vllm-engine-core/source"],
  external: ["zeromq"],
  logLevel: "warning",
});
