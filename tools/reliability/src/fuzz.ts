// `fuzz` script: the rogue-engine fuzz scenario for `--seconds` (default 60). Exit code 1 when a request
// got wrong tokens or hung, an untyped error or an uncaught exception surfaced, a fresh request failed on a
// healthy client, or new work was not refused at once after an engine died.
import { numberArgs } from "./args.js";
import { runRogueFuzz } from "./rogue-fuzz.js";

const args = numberArgs(process.argv.slice(2), { seconds: 60, seed: Math.floor(Math.random() * 1e9) });
const report = await runRogueFuzz(args.seconds, args.seed, { echoStderr: false });
console.log(JSON.stringify(report, null, 2));
const phases = [report.decodable, report.undecodable];
const bad =
  phases.some(
    (p) => p.tokenMismatches.length > 0 || p.hung.length > 0 || !p.freshOk || p.failFastViolations.length > 0,
  ) ||
  !report.decodable.healthyAtEnd ||
  report.untypedErrors.length > 0 ||
  report.uncaught.length > 0;
process.exitCode = bad ? 1 : 0;
