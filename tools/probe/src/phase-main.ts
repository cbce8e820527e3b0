#!/usr/bin/env node
// One probe phase in its own process (so "after" never shares a process with the zeromq the "before"
// control client loaded on the connecting thread). Logs go to stderr; the result is one JSON line on stdout.
//   node dist/phase-main.js after '{"blockMs":2000,"stepMs":5,"streams":8,"modes":["parked"]}'
import { runAfter } from "./after.js";
import { CONNECTING_LABEL, type PhaseOptions, type PhaseResult, runBefore } from "./before.js";
import { measureFloor } from "./floor.js";
import { createThreadMarker } from "./net.js";
import { baselineEventfdsOf } from "./procfs/analyze.js";
import { procfsAvailable, readProcSnapshot } from "./procfs/snapshot.js";
import { runScenarioFromArgv } from "./scenario-process.js";

/** What the probe's main script passes every phase (its --block-ms, --step-ms, --streams, --modes). */
type PhaseConfig = Omit<PhaseOptions, "marker" | "log">;

/** Runs a phase with the connecting thread marked for /proc (where available). */
async function onMarkedThread(
  config: PhaseConfig,
  run: (options: PhaseOptions) => Promise<PhaseResult>,
): Promise<PhaseResult> {
  const marker = procfsAvailable() ? await createThreadMarker() : undefined;
  // Baseline of the connecting thread's loop before anything touched ZeroMQ: its own libuv eventfd.
  const baseline = marker ? baselineEventfdsOf(readProcSnapshot(), marker.fd) : undefined;
  try {
    return await run({
      ...config,
      marker: marker
        ? {
            label: CONNECTING_LABEL,
            markerFd: marker.fd,
            ...(baseline ? { baselineEventfds: baseline } : {}),
          }
        : undefined,
      log: (line) => process.stderr.write(`  ${line}\n`),
    });
  } finally {
    await marker?.close();
  }
}

await runScenarioFromArgv({
  floor: (c: PhaseConfig) => measureFloor({ intervalMs: c.stepMs, warmupMs: 500, measureMs: c.blockMs }),
  before: (c: PhaseConfig) => onMarkedThread(c, runBefore),
  after: (c: PhaseConfig) => onMarkedThread(c, runAfter),
});
