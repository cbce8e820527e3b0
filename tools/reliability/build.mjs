// Bundles the scenario entries run as child processes (leak check) and the soak/stress scripts into
// dist/*.mjs. Workspace packages stay external: at run time plain Node resolves them to their built dist,
// exactly as an application would.
import { build } from "esbuild";

await build({
  entryPoints: {
    "leak-child": "src/leak-child.ts",
    soak: "src/soak.ts",
    stress: "src/stress.ts",
    fuzz: "src/fuzz.ts",
    "rogue-engine-main": "test/fixtures/rogue-engine-main.ts",
  },
  outdir: "dist",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  sourcemap: true,
  logLevel: "warning",
});
