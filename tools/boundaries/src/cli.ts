// `pnpm check:boundaries`: exits 1 and lists every violation of the boundary rules (../.dependency-cruiser.cjs
// and manifests.ts). `--root DIR` checks another tree.
import { fileURLToPath } from "node:url";
import { checkBoundaries, formatViolations } from "./check.js";

const rootArg = process.argv.indexOf("--root");
const root =
  rootArg >= 0 && process.argv[rootArg + 1] !== undefined
    ? process.argv[rootArg + 1]!
    : fileURLToPath(new URL("../../..", import.meta.url));

const { violations, scannedFiles } = await checkBoundaries(root);
if (violations.length > 0) {
  console.error(
    `check:boundaries: ${violations.length} violation(s) in ${root}:\n${formatViolations(violations)}`,
  );
  process.exitCode = 1;
} else {
  console.log(`check:boundaries: ${scannedFiles.length} files checked by dependency-cruiser, no violations.`);
}
