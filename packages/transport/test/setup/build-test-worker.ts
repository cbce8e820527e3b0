// Bundles test/worker/transport-worker.ts (+ the transport and protocol sources it imports) into
// dist/test-worker/transport-worker.js before the tests run, so they always exercise the current sources.
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export const TEST_WORKER_PATH = fileURLToPath(
  new URL("../../dist/test-worker/transport-worker.js", import.meta.url),
);

export default async function setup(): Promise<void> {
  await build({
    entryPoints: [fileURLToPath(new URL("../worker/transport-worker.ts", import.meta.url))],
    outfile: TEST_WORKER_PATH,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    conditions: ["@vllm-engine-core/source"],
    external: ["zeromq"], // native addon: loaded from node_modules at run time
    sourcemap: "inline",
    logLevel: "warning",
  });
}
