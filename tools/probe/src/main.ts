#!/usr/bin/env node
// The probe: runs "before" (a control frontend with its sockets on the connecting thread) and "after"
// (the product) each in its own process, prints the seed's table and writes bench-results/probe.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { PhaseResult } from "./before.js";
import { machineInfo } from "./machine.js";
import { procfsAvailable } from "./procfs/snapshot.js";
import { buildRows, type ProbeDocument, parkedGoal, renderTable } from "./report.js";
import { runScenarioProcess } from "./scenario-process.js";
import { formatMs, type Summary } from "./stats.js";
import { parseToolArgs } from "./tool-args.js";

const HELP = `usage: probe [--block-ms 5000] [--step-ms 5] [--streams 8] [--modes idle,parked,busy] [--out <file>]

Measures, before (sockets on the connecting thread) and after (the product's runtime thread):
  * which thread's epoll watches the ZeroMQ descriptors (Linux /proc; "unavailable" elsewhere);
  * the delay of outputs the mock engine sent while the connecting thread was blocked, measured on a
    third thread (after) or on the blocked thread itself (before, as in the seed).
Writes the table and all samples' summaries to bench-results/probe.json (or --out).`;

const values = parseToolArgs(HELP, {
  "block-ms": { type: "string", default: "5000" },
  "step-ms": { type: "string", default: "5" },
  streams: { type: "string", default: "8" },
  modes: { type: "string", default: "idle,parked,busy" },
  out: { type: "string" },
});
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "..", "..", "..");
const outFile = resolve(values.out ?? resolve(repoRoot, "bench-results", "probe.json"));
const config = {
  blockMs: Number(values["block-ms"]),
  stepMs: Number(values["step-ms"]),
  streams: Number(values.streams),
  modes: values.modes!.split(",").filter((m) => m === "idle" || m === "parked" || m === "busy"),
};
for (const [k, v] of Object.entries(config)) {
  if (typeof v === "number" && !(Number.isInteger(v) && v >= 1)) {
    throw new Error(`--${k} must be a positive integer, got ${v}`);
  }
}

function runPhase<T = PhaseResult>(phase: "floor" | "before" | "after"): Promise<T> {
  return runScenarioProcess<T>(resolve(here, "phase-main.js"), phase, config, {
    label: `probe phase "${phase}"`,
  });
}

const descriptorsAvailable = procfsAvailable();
console.log(
  `vllm-engine-core probe — ${config.streams} streams, engine step ${config.stepMs} ms, block ${config.blockMs} ms`,
);
if (!descriptorsAvailable)
  console.log("descriptor part: unavailable (needs Linux /proc); the delay part still runs");
console.log("phase 1/3: floor (bare libzmq PUSH → PULL hop between two processes, receiver idle)");
const floor = await runPhase<Summary>("floor");
console.log("phase 2/3: before (control client: ZeroMQ sockets on the connecting thread, consumed there)");
const before = await runPhase("before");
console.log("phase 3/3: after (the product: sockets on the runtime thread, consumer on a third thread)");
const after = await runPhase("after");

const rows = buildRows(before, after, config.blockMs);
console.log(`\n${renderTable(rows)}\n`);
console.log(
  `machine floor (bare libzmq hop, no engine, no decode, no thread hop; p50 / p99 / max): ` +
    `${formatMs(floor.p50)} / ${formatMs(floor.p99)} / ${formatMs(floor.max)} (n=${floor.count})`,
);

if (before.descriptors && after.descriptors) {
  const b = before.descriptors;
  const a = after.descriptors;
  const known = before.knownSignalerFds ?? [];
  const seen = b.connectingThread?.signalerFds ?? [];
  const match = known.length === seen.length && known.every((fd) => seen.includes(fd));
  console.log(
    `before: connecting thread's epoll (fd ${b.connectingThread?.epollFd}) watches ZMQ_FD ${JSON.stringify(seen)}; ` +
      `the control client's sockets report ZMQ_FD ${JSON.stringify(known)} (${match ? "match" : "MISMATCH"}).`,
  );
  if (a.runtimeThread) {
    const t = a.runtimeThread;
    console.log(
      `after: runtime thread = tid ${t.tid ?? "?"} ("${t.threadName ?? "?"}"), epoll fd ${t.epollFd}: the only Node loop ` +
        `not owned by the probe that watches ZeroMQ signalers (${t.zmqSignalers}; counted as its eventfds minus ` +
        `libuv's own wake-up eventfd). The connecting thread's epoll (fd ${a.connectingThread?.epollFd}) watches ` +
        `${a.connectingThread?.zmqSignalers ?? "?"} ZeroMQ descriptors.`,
    );
  }
  console.log(
    `ZeroMQ TCP descriptors (listeners + accepted connections of the input and output sockets) live in ` +
      `${[...new Set([...b.libzmqTcp.owners, ...a.libzmqTcp.owners])].join(", ") || "?"} in both cases: libzmq's own ` +
      "I/O thread, never a JS thread. What moves with the socket owner is the ZMQ_FD signaler: the thread whose " +
      "loop watches it is woken for every message and does receive, decode and dispatch.",
  );
}
const goal = parkedGoal(after, floor);
console.log(
  `goal: ${goal.metric} ≤ ${goal.limitMs} ms — measured ${goal.measuredMs === null ? "n/a" : `${goal.measuredMs.toFixed(3)} ms`} → ${goal.met === null ? "not measured" : goal.met ? "met" : "MISSED"}` +
    (goal.floorP99Ms === null ? "" : ` (machine floor p99 ${goal.floorP99Ms.toFixed(3)} ms)`),
);

const document: ProbeDocument = {
  tool: "@vllm-engine-core/probe",
  command: "pnpm probe",
  generatedAt: new Date().toISOString(),
  machine: machineInfo(),
  config,
  descriptorsAvailable,
  rows,
  goal,
  floor,
  before,
  after,
};
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(document, null, 2)}\n`);
console.log(`wrote ${outFile}`);
