#!/usr/bin/env node
// One probe phase in its own process (so "after" never shares a process with the zeromq the "before"
// control client loaded on the connecting thread). Logs go to stderr; the result is one JSON line on stdout.
import { parseArgs } from "node:util";
import { runAfter } from "./after.js";
import { CONNECTING_LABEL, type PhaseOptions, runBefore } from "./before.js";
import type { BlockMode } from "./block.js";
import { measureFloor } from "./floor.js";
import { createThreadMarker } from "./net.js";
import { baselineEventfdsOf } from "./procfs/analyze.js";
import { procfsAvailable, readProcSnapshot } from "./procfs/snapshot.js";

const { values } = parseArgs({
  options: {
    phase: { type: "string" },
    "block-ms": { type: "string" },
    "step-ms": { type: "string" },
    streams: { type: "string" },
    modes: { type: "string" },
  },
});
const blockMs = Number(values["block-ms"] ?? 5000);
const stepMs = Number(values["step-ms"] ?? 5);

async function run(phase: string | undefined): Promise<unknown> {
  if (phase === "floor") return measureFloor({ intervalMs: stepMs, warmupMs: 500, measureMs: blockMs });
  if (phase !== "before" && phase !== "after")
    throw new Error(`--phase must be floor, before or after, got ${phase}`);
  const marker = procfsAvailable() ? await createThreadMarker() : undefined;
  // Baseline of the connecting thread's loop before anything touched ZeroMQ: its own libuv eventfd.
  const baseline = marker ? baselineEventfdsOf(readProcSnapshot(), marker.fd) : undefined;
  const options: PhaseOptions = {
    blockMs,
    stepMs,
    streams: Number(values.streams ?? 8),
    modes: (values.modes ?? "idle,parked,busy").split(",") as BlockMode[],
    marker: marker
      ? { label: CONNECTING_LABEL, markerFd: marker.fd, ...(baseline ? { baselineEventfds: baseline } : {}) }
      : undefined,
    log: (line) => process.stderr.write(`  ${line}\n`),
  };
  try {
    return phase === "before" ? await runBefore(options) : await runAfter(options);
  } finally {
    await marker?.close();
  }
}

process.stdout.write(`${JSON.stringify(await run(values.phase))}\n`);
