// Bundles the runtime worker entry into dist/runtime-thread/main.js: the transport is inlined (it is private and
// never published); the protocol, config and errors packages stay external and are imported, so the worker
// and every other thread run one copy of the codec and of the error classes; zeromq stays external (native
// addon). All of them are dependencies of this package.
import { build } from "esbuild";

await build({
  entryPoints: [new URL("../src/runtime-thread/main.ts", import.meta.url).pathname],
  outfile: new URL("../dist/runtime-thread/main.js", import.meta.url).pathname,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  // Workspace packages resolve to their TypeScript sources, like in tests.
  conditions: ["@vllm-engine-core/source"],
  external: ["zeromq", "@vllm-engine-core/errors", "@vllm-engine-core/protocol", "@vllm-engine-core/config"],
  logLevel: "warning",
});
