// Bundles the runtime worker entry into dist/worker/main.js: the transport and the protocol are inlined
// (the transport is private and never published), zeromq stays external (native addon, a dependency).
import { build } from "esbuild";

await build({
  entryPoints: [new URL("../src/worker/main.ts", import.meta.url).pathname],
  outfile: new URL("../dist/worker/main.js", import.meta.url).pathname,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  // Workspace packages resolve to their TypeScript sources, like in tests.
  conditions: ["@vllm-engine-core/source"],
  external: ["zeromq"],
  logLevel: "warning",
});
