// The probe's table (the seed's shape: measurement | before | after) and its JSON document.
import type { PhaseResult } from "./before.js";
import type { BlockedDelayResult } from "./blocked.js";
import type { MachineInfo } from "./machine.js";
import { formatMs, type Summary } from "./stats.js";

export interface TableRow {
  measurement: string;
  before: string;
  after: string;
}

function delayCell(d: BlockedDelayResult | undefined): string {
  if (d === undefined) return "not run";
  if (d.delay.count === 0) return "no outputs during the block";
  return `${formatMs(d.delay.p50)} / ${formatMs(d.delay.p99)} / ${formatMs(d.delay.max)} (n=${d.delay.count})`;
}

export function buildRows(before: PhaseResult, after: PhaseResult, blockMs: number): TableRow[] {
  const rows: TableRow[] = [];
  const b = before.descriptors;
  const a = after.descriptors;
  if (b === undefined || a === undefined) {
    rows.push({
      measurement: "ZeroMQ descriptors per thread epoll",
      before: "unavailable (needs Linux /proc)",
      after: "unavailable (needs Linux /proc)",
    });
  } else {
    rows.push({
      measurement: "ZeroMQ socket descriptors (ZMQ_FD) in the connecting thread's epoll",
      before: String(b.connectingThread?.zmqSignalers ?? "not found"),
      after: String(a.connectingThread?.zmqSignalers ?? "not found"),
    });
    rows.push({
      measurement: "ZeroMQ socket descriptors (ZMQ_FD) in the runtime thread's epoll",
      before:
        b.runtimeCandidates === 0 ? "0 (no runtime thread)" : `${b.runtimeCandidates} unexpected loop(s)`,
      after: a.runtimeThread
        ? String(a.runtimeThread.zmqSignalers)
        : `runtime not identified (${a.runtimeCandidates} candidates)`,
    });
    rows.push({
      measurement: "ZeroMQ TCP descriptors: in libzmq's I/O thread epoll / in any JS thread's epoll",
      before: `${b.libzmqTcp.count} / ${b.zmqTcpInNodeLoops}`,
      after: `${a.libzmqTcp.count} / ${a.zmqTcpInNodeLoops}`,
    });
  }
  const seconds = `${(blockMs / 1000).toFixed(blockMs % 1000 === 0 ? 0 : 1)} s`;
  for (const mode of ["idle", "parked", "busy"] as const) {
    const bd = before.delays.find((d) => d.mode === mode);
    const ad = after.delays.find((d) => d.mode === mode);
    if (bd === undefined && ad === undefined) continue;
    rows.push({
      measurement:
        mode === "idle"
          ? `output delay, connecting thread idle for ${seconds} (reference; p50 / p99 / max)`
          : `output delay while the connecting thread was blocked ${seconds}, ${mode} (p50 / p99 / max)`,
      before: delayCell(bd),
      after: delayCell(ad),
    });
  }
  return rows;
}

export function renderTable(rows: readonly TableRow[]): string {
  const all = [
    { measurement: "measurement", before: "before (sockets on the caller)", after: "after (runtime thread)" },
    ...rows,
  ];
  const w = [0, 1, 2].map((i) => Math.max(...all.map((r) => [r.measurement, r.before, r.after][i]!.length)));
  const line = (r: TableRow) =>
    `| ${r.measurement.padEnd(w[0]!)} | ${r.before.padEnd(w[1]!)} | ${r.after.padEnd(w[2]!)} |`;
  const sep = `|${w.map((n) => "-".repeat(n + 2)).join("|")}|`;
  return [line(all[0]!), sep, ...rows.map(line)].join("\n");
}

export interface ProbeDocument {
  tool: "@vllm-engine-core/probe";
  command: string;
  generatedAt: string;
  machine: MachineInfo;
  config: { blockMs: number; stepMs: number; streams: number; modes: string[] };
  descriptorsAvailable: boolean;
  rows: TableRow[];
  goal: ProbeGoal;
  /** Bare libzmq PUSH → PULL hop between two processes at the same rate (the machine's floor). */
  floor: Summary;
  before: PhaseResult;
  after: PhaseResult;
}

export interface ProbeGoal {
  metric: string;
  limitMs: number;
  measuredMs: number | null;
  met: boolean | null;
  /** p99 of the bare libzmq hop on the same machine, when measured: no design can beat it. */
  floorP99Ms: number | null;
}

export function parkedGoal(after: PhaseResult, floor?: Summary): ProbeGoal {
  const parked: Summary | undefined = after.delays.find((d) => d.mode === "parked")?.delay;
  const measured = parked && parked.count > 0 ? parked.p99 : null;
  return {
    metric: "after, parked: p99 output delay while the connecting thread is blocked",
    limitMs: 1,
    measuredMs: measured,
    met: measured === null ? null : measured <= 1,
    floorP99Ms: floor && floor.count > 0 ? floor.p99 : null,
  };
}
