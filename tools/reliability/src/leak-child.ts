// Child-process entry of the leak check: `node --expose-gc dist/leak-child.mjs --connects 200 ...`.
// Progress goes to stderr; the last stdout line is the JSON LeakReport.
import { numberArgs } from "./args.js";
import { removeIpcFiles } from "./harness.js";
import { runLeakScenario } from "./leak-scenario.js";
import { hasGc } from "./resources.js";

if (!hasGc()) {
  console.error("leak-child: run with node --expose-gc (heap figures need a forced GC)");
  process.exit(2);
}
const args = numberArgs(process.argv.slice(2), {
  connects: 200,
  connectsWithoutKeeper: 30,
  connectsWithEngine: 16,
  streams: 10_000,
  utilities: 1_000,
  seed: Date.now() % 1_000_000,
});
const report = await runLeakScenario({ ...args, log: (line) => console.error(`[leak] ${line}`) });
removeIpcFiles();
console.log(JSON.stringify(report));
