// Bundles the runtime worker entry into dist/worker/main.js: the transport is inlined (it is private and
// never published); the protocol stays external and is imported from the package, so the worker and every
// other thread run the one copy of the codec (and its error classes); zeromq stays external (native addon).
// All three are dependencies of this package.
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
  external: ["zeromq", "@vllm-engine-core/protocol", "@vllm-engine-core/config"],
  logLevel: "warning",
});
