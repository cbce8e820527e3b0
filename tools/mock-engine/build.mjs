// Bundles the child-process entries (dist/main.js, the mock DP coordinator dist/coordinator.js) and the
// launchers (dist/index.js) with esbuild.
// Dependencies stay external: zeromq is a native addon, and the protocol package resolves to its dist at
// run time (Node ignores the source condition), exactly as for any consumer. dist/ is overwritten in place,
// not wiped first: other processes may be starting dist/main.js while a build runs.
import { build } from "esbuild";

await build({
  entryPoints: { main: "src/main.ts", coordinator: "src/coordinator-main.ts", index: "src/index.ts" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  sourcemap: true,
  logLevel: "warning",
});
