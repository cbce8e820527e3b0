// `fuzz` script: the rogue-engine fuzz scenario for `--seconds` (default 60). Exit code 1 when a request
// got wrong tokens, an untyped error or an uncaught exception surfaced, or a fresh request failed.
import { numberArgs } from "./args.js";
import { runRogueFuzz } from "./rogue-fuzz.js";

const args = numberArgs(process.argv.slice(2), { seconds: 60, seed: Math.floor(Math.random() * 1e9) });
const report = await runRogueFuzz(args.seconds, args.seed, { echoStderr: false });
console.log(JSON.stringify(report, null, 2));
const bad =
  report.tokenMismatches.length > 0 ||
  report.untypedErrors.length > 0 ||
  report.uncaught.length > 0 ||
  !report.freshOk;
process.exitCode = bad ? 1 : 0;
