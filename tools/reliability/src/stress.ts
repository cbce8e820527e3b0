// Stress run (not in CI): the leak scenario at 10,000 iterations, in a child `node --expose-gc` process.
// `node dist/stress.mjs [--connects 10000] [--connects-with-engine 300] [--connects-without-keeper 1000]
// [--streams 10000] [--utilities 10000] [--seed N]`. Prints before/after figures; exit code 1 on a violation.
import { numberArgs } from "./args.js";
import { runLeakChild } from "./leak-run.js";
import { leakSummary, leakViolations } from "./leak-verdict.js";

const args = numberArgs(process.argv.slice(2), {
  connects: 10_000,
  connectsWithEngine: 300,
  connectsWithoutKeeper: 1_000,
  streams: 10_000,
  utilities: 10_000,
  seed: Date.now() % 1_000_000,
});
const childArgs = Object.entries(args).flatMap(([name, value]) => [
  `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
  String(value),
]);
const started = Date.now();
const report = await runLeakChild(new URL("./leak-child.mjs", import.meta.url), childArgs, (text) =>
  process.stderr.write(text),
);
console.log(leakSummary(report));
const violations = leakViolations(report);
console.log(
  violations.length === 0
    ? `stress: PASS in ${((Date.now() - started) / 1000).toFixed(0)} s`
    : `stress: FAIL\n  ${violations.slice(0, 50).join("\n  ")}`,
);
if (violations.length > 0) process.exitCode = 1;
