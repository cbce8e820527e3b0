// Turns a LeakReport into a list of violations (empty = pass) and a printable summary. Shared by the CI
// test (test/leaks.test.ts) and the stress script, so both judge with the same margins.
import type { LeakReport } from "./leak-scenario.js";
import { describeSample, mb } from "./resources.js";

/**
 * Margins. fds and threads must be back exactly (one of slack): the runtime retired and every child
 * process is gone. The heap may keep a little compiled code and caches: 3 MB is 300 bytes per stream of
 * a 10,000-stream run, far below any per-request leak.
 */
export const LEAK_MARGINS = { fds: 1, threads: 1, heapBytes: 3 * 1024 * 1024, externalBytes: 1024 * 1024 };

export function leakViolations(report: LeakReport): string[] {
  const { before, after, options } = report;
  const violations = [...report.errors];
  const attempts = Object.values(report.connectKinds).reduce((n, k) => n + k.attempts, 0);
  if (attempts !== options.connects) violations.push(`connect attempts ${attempts} != ${options.connects}`);
  for (const [kind, k] of Object.entries(report.connectKinds)) {
    // Only an abort at a random moment against a live engine may lose the race and connect first.
    if (kind !== "random-moment" && k.aborted !== k.attempts) {
      violations.push(`${kind}: ${k.aborted} of ${k.attempts} connects were aborted`);
    }
  }
  if (report.utilitiesOk !== options.utilities) {
    violations.push(`utility calls ok ${report.utilitiesOk} != ${options.utilities}`);
  }
  if (report.streamsCollected !== options.streams) {
    violations.push(
      `only ${report.streamsCollected} of ${options.streams} dropped streams were garbage-collected`,
    );
  }
  if (after.fds > before.fds + LEAK_MARGINS.fds) violations.push(`fds ${before.fds} → ${after.fds}`);
  if (after.threads > before.threads + LEAK_MARGINS.threads) {
    violations.push(`threads ${before.threads} → ${after.threads}`);
  }
  if (after.heapUsed - before.heapUsed > LEAK_MARGINS.heapBytes) {
    violations.push(`heap ${mb(before.heapUsed)} → ${mb(after.heapUsed)}`);
  }
  if (after.external - before.external > LEAK_MARGINS.externalBytes) {
    violations.push(`external ${mb(before.external)} → ${mb(after.external)}`);
  }
  return violations;
}

export function leakSummary(report: LeakReport): string {
  const { before, during, after } = report;
  return [
    `leak check (seed ${report.seed}, ${JSON.stringify(report.options)}):`,
    `  before: ${describeSample(before)}`,
    `  during: ${describeSample(during)} (keeper connection open)`,
    `  after:  ${describeSample(after)}`,
    `  deltas: fds ${after.fds - before.fds}, threads ${after.threads - before.threads}, heap ${mb(after.heapUsed - before.heapUsed)}, rss ${mb(after.rss - before.rss)}, ipc files left by the run ${after.ipcFiles - before.ipcFiles}`,
    `  connects by stage: ${JSON.stringify(report.connectKinds)}`,
    `  streams by mode: ${JSON.stringify(report.streamModes)}; garbage-collected ${report.streamsCollected}`,
    `  durations (ms): ${JSON.stringify(report.durationsMs)}`,
  ].join("\n");
}
