import { describe, expect, it } from "vitest";
import type { PhaseResult } from "../src/before.js";
import type { BlockMode } from "../src/block.js";
import type { BlockedDelayResult } from "../src/blocked.js";
import type { DescriptorPhase } from "../src/procfs/phase.js";
import { buildRows, parkedGoal, renderTable } from "../src/report.js";
import { summarize } from "../src/stats.js";

function delays(mode: BlockMode, samples: number[]): BlockedDelayResult {
  return { mode, blockedMs: 5000, delay: summarize(samples), outputsTotal: samples.length, merged: 0 };
}

function phase(connecting: number, runtime: number | undefined): DescriptorPhase {
  const thread = (label: string, n: number) => ({
    label,
    epollFd: 14,
    tid: 1,
    threadName: "node",
    zmqSignalers: n,
    signalerFds: [],
    countMethod: "baseline" as const,
  });
  return {
    connectingThread: thread("connecting thread", connecting),
    runtimeThread: runtime === undefined ? undefined : thread("runtime thread", runtime),
    runtimeCandidates: runtime === undefined ? 0 : 1,
    libzmqTcp: { count: 4, owners: ["ZMQbg/IO/0"], descriptors: [] },
    zmqTcpInNodeLoops: 0,
    zmqTcpTotal: 4,
    loops: [],
  };
}

describe("probe table", () => {
  const before: PhaseResult = {
    descriptors: phase(2, undefined),
    delays: [delays("parked", [4900, 2500, 10]), delays("busy", [4000])],
  };
  const after: PhaseResult = {
    descriptors: phase(0, 2),
    delays: [delays("parked", [0.4, 0.5, 0.9]), delays("busy", [3])],
  };

  it("has the seed's rows: descriptors per thread, then the blocked-caller delay per mode", () => {
    const rows = buildRows(before, after, 5000);
    expect(rows.map((r) => [r.before, r.after])).toEqual([
      ["2", "0"],
      ["0 (no runtime thread)", "2"],
      ["4 / 0", "4 / 0"],
      ["2.50 s / 4.90 s / 4.90 s (n=3)", "500 µs / 900 µs / 900 µs (n=3)"],
      ["4.00 s / 4.00 s / 4.00 s (n=1)", "3.00 ms / 3.00 ms / 3.00 ms (n=1)"],
    ]);
    expect(rows[3]!.measurement).toContain("blocked 5 s, parked");
    const table = renderTable(rows).split("\n");
    expect(table).toHaveLength(7);
    expect(new Set(table.map((l) => l.length)).size).toBe(1); // aligned columns
  });

  it("says unavailable when there is no descriptor data (non-Linux)", () => {
    const rows = buildRows({ ...before, descriptors: undefined }, { ...after, descriptors: undefined }, 5000);
    expect(rows[0]!.before).toMatch(/unavailable/);
    expect(rows).toHaveLength(3);
  });

  it("puts the idle reference first when it was measured", () => {
    const rows = buildRows(
      { ...before, delays: [delays("idle", [0.3]), ...before.delays] },
      { ...after, delays: [delays("idle", [0.2]), ...after.delays] },
      5000,
    );
    expect(rows[3]!.measurement).toContain("idle");
    expect([rows[3]!.before, rows[3]!.after]).toEqual([
      "300 µs / 300 µs / 300 µs (n=1)",
      "200 µs / 200 µs / 200 µs (n=1)",
    ]);
  });

  it("judges the parked goal on the after p99 and carries the machine floor", () => {
    expect(parkedGoal(after)).toMatchObject({ measuredMs: 0.9, met: true, floorP99Ms: null });
    expect(parkedGoal(after, summarize([0.2, 4]))).toMatchObject({ floorP99Ms: 4 });
    expect(parkedGoal({ descriptors: undefined, delays: [delays("parked", [1.5])] })).toMatchObject({
      met: false,
    });
    expect(parkedGoal({ descriptors: undefined, delays: [] })).toMatchObject({ measuredMs: null, met: null });
  });
});
