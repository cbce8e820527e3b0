import { summarize } from "@vllm-engine-core/probe";
import { describe, expect, it } from "vitest";
import type { FastStreamsWindow } from "../src/fast-window.js";
import { type BenchDocument, computeGoals, renderMarkdown } from "../src/report.js";
import type { SlowReaderMemory, ThroughputResult } from "../src/types.js";

function tp(
  engine: "mock" | "replay",
  runner: ThroughputResult["runner"],
  streams: number,
  rate: number,
  skipped?: string,
  frontendCpu?: number,
) {
  return {
    engine,
    runner,
    streams,
    outputsPerSec: rate,
    tokens: 1,
    merged: 0,
    windowMs: 3000,
    cpu: frontendCpu === undefined ? undefined : { engine: 0.2, frontend: frontendCpu, threads: [] },
    ...(skipped ? { skipped } : {}),
  };
}

function lat(runner: "product" | "direct", streams: number, p50: number, p99: number) {
  return {
    runner,
    streams,
    caller: "idle" as const,
    stepMs: 10,
    delay: { ...summarize([p50, p99]), p50, p99 },
    merged: 0,
    cpu: undefined,
  };
}

function doc(): Omit<BenchDocument, "goals" | "profile"> {
  return {
    tool: "@vllm-engine-core/bench",
    command: "pnpm bench",
    generatedAt: "2026-01-01T00:00:00.000Z",
    commit: "abc1234",
    machine: {
      cpuModel: "CPU",
      cores: 2,
      node: "v20",
      os: "Linux",
      memoryGiB: 8,
      loadAvgStart: [0.1, 0.1, 0.1],
      loadAvgEnd: [1, 1, 1],
    },
    durationS: 100,
    codec: { missing: "no codec results" },
    probe: {
      generatedAt: "2026-01-01T00:00:00.000Z",
      rows: [{ measurement: "m", before: "2", after: "0" }],
      // parked p99 1.5 ms vs the hop's 0.5 ms: 3× > 2×
      goal: { measuredMs: 1.5, met: false, floorP99Ms: 0.5, limitMs: 1 },
    },
    floor: summarize([0.1, 0.2, 0.3]),
    throughput: [
      // 256: product 1.1 M/s at 1.1 cores (1.0 µs/output), ceiling 1.0 M/s at 0.8 cores (0.8 µs) → 1.25×
      tp("replay", "ceiling", 256, 1_000_000, undefined, 0.8),
      tp("replay", "product", 256, 1_100_000, undefined, 1.1),
      tp("replay", "product-metrics", 256, 1_034_000),
      tp("replay", "python", 256, 300_000),
      // 1024: product 1.5 M/s at 1.5 cores (1.0 µs), ceiling 2.0 M/s at 1.0 core (0.5 µs) → 2×
      tp("replay", "ceiling", 1024, 2_000_000, undefined, 1.0),
      tp("replay", "product", 1024, 1_500_000, undefined, 1.5),
      tp("replay", "product-metrics", 1024, 1_200_000),
      tp("replay", "python", 1024, 400_000),
      tp("mock", "ceiling", 256, 600_000),
      tp("mock", "product", 256, 600_000),
      tp("mock", "ceiling", 1024, 500_000),
      tp("mock", "product", 1024, 500_000),
      tp("mock", "python", 1024, Number.NaN, "missing module: zmq"),
    ],
    latency: [
      lat("product", 256, 0.9, 2.4), // direct + 100 µs (met); 1.2× direct p99 (met)
      lat("direct", 256, 0.8, 2.0),
      lat("product", 1024, 2.6, 8), // 1.3× direct p50 (missed)
      lat("direct", 1024, 2.0, 4),
      lat("product", 1, 0.5, 1),
    ],
    memory: { openStreams: undefined, slowReader: undefined },
    errors: [],
  };
}

function fastWindow(p50: number, p99: number, stepsPerSec: number): FastStreamsWindow {
  return {
    windowMs: 5000,
    delay: { ...summarize([p50, p99]), p50, p99 },
    deliveries: 2_000_000,
    merged: 20_000,
    tokens: 2_100_000,
    deliveredTokensPerSec: 420_000,
    deliveriesPerSec: 400_000,
    engineStepsPerSec: stepsPerSec,
    engineSpan: { seconds: 1280, tokens: 1280 * stepsPerSec },
  };
}

function slowReader(): SlowReaderMemory {
  const mem = (rssMiB: number) => ({
    rss: rssMiB * 2 ** 20,
    heapUsed: 6 * 2 ** 20,
    heapTotal: 8 * 2 ** 20,
    external: 0,
    arrayBuffers: 0,
  });
  const cpu = (engine: number) => ({
    engine,
    frontend: 0.6,
    threads: [{ label: "consumer thread", tid: 7, cpu: 0.3 }],
  });
  return {
    fastStreams: 256,
    slowReadEveryMs: 100,
    durationMs: 10_000,
    baselineMs: 5000,
    samples: [mem(120), mem(130), mem(125)],
    baselineSamples: [mem(110), mem(118)],
    rssStart: 120 * 2 ** 20,
    rssEnd: 125 * 2 ** 20,
    slowBufferedTokens: 188,
    slowTokens: 18_260,
    slowReads: 97,
    fastTokens: 4_674_561,
    warmup: { ms: 10_000, settled: false, minMs: 2000, maxMs: 10_000 },
    fast: {
      baselineBefore: fastWindow(1, 4, 2000),
      slow: fastWindow(1.5, 6, 1900),
      baselineAfter: fastWindow(1, 4, 2000),
      baseline: fastWindow(1, 4, 2000),
    },
    cpu: { baselineBefore: cpu(0.9), slow: cpu(0.8), baselineAfter: cpu(0.9), baseline: cpu(0.9) },
    ratios: { delayP50: 1.5, delayP99: 1.5, deliveredTokensPerSec: 1, engineStepsPerSec: 0.95 },
  };
}

describe("computeGoals", () => {
  const goals = computeGoals(doc());
  const byGoal = (text: string) => {
    const found = goals.filter((g) => g.goal.startsWith(text));
    expect(found, text).toHaveLength(1);
    return found[0]!;
  };

  it("states the speed goals, the metrics rows, the Python rows and nothing else", () => {
    expect(goals.map((g) => g.goal)).toEqual([
      "delivered outputs/s vs the single-thread ceiling, 256 streams (replay engine)",
      "delivered outputs/s vs the single-thread ceiling, 1024 streams (replay engine)",
      "frontend CPU per delivered output vs the ceiling's, 256 streams (replay engine)",
      "frontend CPU per delivered output vs the ceiling's, 1024 streams (replay engine)",
      "engine → consumer p50 vs direct, 256 streams, idle caller",
      "engine → consumer p99 vs direct, 256 streams, idle caller",
      "engine → consumer p50 vs direct, 1024 streams, idle caller",
      "blocked caller, connecting thread parked: output delay p99 vs the bare libzmq hop p99",
      "stretch: beat the single-thread ceiling, 256 and 1024 streams (replay engine)",
      "product with metrics instrumented vs plain product, 256-output batches (replay engine)",
      "product with metrics instrumented vs plain product, 1024-output batches (replay engine)",
      "product with metrics instrumented vs plain product, 256-output batches (mock engine)",
      "product with metrics instrumented vs plain product, 1024-output batches (mock engine)",
      "delivered outputs/s vs Python frontend loop, 1024-output batches (replay engine)",
      "delivered outputs/s vs Python frontend loop, 1024-output batches (mock engine)",
    ]);
    // The mock engine caps every frontend on a small machine: its ceiling ratio is no goal.
    expect(goals.some((g) => g.goal.includes("ceiling") && g.goal.includes("mock"))).toBe(false);
  });

  it("judges the replay engine's outputs/s against 1.0× the ceiling at 256 and at 1024 streams", () => {
    const at256 = byGoal("delivered outputs/s vs the single-thread ceiling, 256");
    expect(at256).toMatchObject({ target: "≥ 1.0×", met: true, measured: "1.10 M/s vs 1.00 M/s = 1.10×" });
    expect(at256.ratio).toBeCloseTo(1.1);
    const at1024 = byGoal("delivered outputs/s vs the single-thread ceiling, 1024");
    expect(at1024).toMatchObject({ met: false, measured: "1.50 M/s vs 2.00 M/s = 0.75×" });
    expect(at1024.ratio).toBeCloseTo(0.75);
  });

  it("compares frontend CPU per delivered output with the ceiling's against 1.3×", () => {
    const at256 = byGoal("frontend CPU per delivered output vs the ceiling's, 256");
    // 1.1 cores / 1.1 M/s = 1.00 µs vs 0.8 / 1.0 M/s = 0.80 µs: 1.25× ≤ 1.3×
    expect(at256).toMatchObject({ target: "≤ 1.3×", met: true, measured: "1.00 µs vs 0.80 µs = 1.25×" });
    expect(at256.ratio).toBeCloseTo(1.3 / 1.25);
    const at1024 = byGoal("frontend CPU per delivered output vs the ceiling's, 1024");
    // 1.0 µs vs 0.5 µs: 2× > 1.3×
    expect(at1024).toMatchObject({ met: false, measured: "1.00 µs vs 0.50 µs = 2.00×" });
    expect(at1024.ratio).toBeCloseTo(1.3 / 2);
  });

  it("judges latency against the direct runner: p50 + 150 µs and 1.25× p99 at 256, 1.2× p50 at 1024", () => {
    const p50 = byGoal("engine → consumer p50 vs direct, 256");
    expect(p50).toMatchObject({
      target: "≤ direct p50 + 150 µs",
      met: true,
      measured: "900 µs vs 800 µs (+100 µs)",
    });
    expect(p50.ratio).toBeCloseTo(0.95 / 0.9);
    const p99 = byGoal("engine → consumer p99 vs direct, 256");
    expect(p99).toMatchObject({
      target: "≤ 1.25× direct p99",
      met: true,
      measured: "2.40 ms vs 2.00 ms = 1.20×",
    });
    expect(p99.ratio).toBeCloseTo(1.25 / 1.2);
    const at1024 = byGoal("engine → consumer p50 vs direct, 1024");
    expect(at1024).toMatchObject({
      target: "≤ 1.2× direct p50",
      met: false,
      measured: "2.60 ms vs 2.00 ms = 1.30×",
    });
    expect(at1024.ratio).toBeCloseTo(1.2 / 1.3);
  });

  it("misses the 256-stream p50 by more than 150 µs even when the ratio to direct is small", () => {
    const d = doc();
    d.latency = [lat("product", 256, 10.2, 20), lat("direct", 256, 10, 20)]; // +200 µs, 1.02×
    const p50 = computeGoals(d).find((g) => g.goal.startsWith("engine → consumer p50 vs direct, 256"))!;
    expect(p50).toMatchObject({ met: false, measured: "10.20 ms vs 10.00 ms (+200 µs)" });
    expect(p50.ratio).toBeCloseTo(10.15 / 10.2);
  });

  it("judges the parked caller's p99 against 2× the bare libzmq hop p99 from the probe", () => {
    const parked = byGoal("blocked caller, connecting thread parked");
    expect(parked).toMatchObject({
      target: "≤ 2× the hop p99",
      met: false,
      measured: "1.50 ms vs 500 µs = 3.00×",
    });
    expect(parked.ratio).toBeCloseTo(2 / 3);
    const d = doc();
    if (!("missing" in d.probe)) d.probe.goal = { ...d.probe.goal, measuredMs: 0.9 }; // 1.8×
    const met = computeGoals(d).find((g) => g.goal.startsWith("blocked caller"))!;
    expect(met).toMatchObject({ met: true });
    expect(met.ratio).toBeCloseTo(2 / 1.8);
  });

  it("meets the stretch goal only above the ceiling at both batch sizes", () => {
    expect(byGoal("stretch:")).toMatchObject({ met: false, measured: "1.10× at 256, 0.75× at 1024" });
    expect(byGoal("stretch:").ratio).toBeCloseTo(0.75);
    const d = doc();
    d.throughput = d.throughput.map((t) =>
      t.engine === "replay" && t.runner === "product" && t.streams === 1024
        ? { ...t, outputsPerSec: 2_200_000 }
        : t,
    );
    const stretch = computeGoals(d).find((g) => g.goal.startsWith("stretch:"))!;
    expect(stretch).toMatchObject({ met: true, measured: "1.10× at 256, 1.10× at 1024" });
    const level = doc();
    level.throughput = level.throughput.map((t) =>
      t.engine === "replay" && t.runner === "product"
        ? { ...t, outputsPerSec: t.streams === 256 ? 1_000_000 : 2_000_000 }
        : t,
    );
    const goalsLevel = computeGoals(level);
    // Equal to the ceiling: the 1.0× goal is met, the stretch (beat it) is not.
    expect(
      goalsLevel.find((g) => g.goal.startsWith("delivered outputs/s vs the single-thread ceiling, 256")),
    ).toMatchObject({ met: true });
    expect(goalsLevel.find((g) => g.goal.startsWith("stretch:"))).toMatchObject({ met: false, ratio: 1 });
  });

  it("judges the product with metrics instrumented against 0.9× the plain product, same run", () => {
    const at = (streams: number) =>
      byGoal(`product with metrics instrumented vs plain product, ${streams}-output batches (replay`);
    expect(at(256)).toMatchObject({ met: true }); // 0.94 ≥ 0.9
    expect(at(256).measured).toContain("0.94×");
    expect(at(1024)).toMatchObject({ met: false }); // 0.8 < 0.9
    const mock = byGoal("product with metrics instrumented vs plain product, 256-output batches (mock");
    expect(mock).toMatchObject({ met: null, ratio: null }); // not measured in this document
  });

  it("judges the Python ratio against 3 and reports a skipped baseline as not measured, with the reason", () => {
    const python = byGoal("delivered outputs/s vs Python frontend loop, 1024-output batches (replay");
    expect(python.measured).toContain("3.75×");
    expect(python.met).toBe(true);
    expect(byGoal("delivered outputs/s vs Python frontend loop, 1024-output batches (mock")).toMatchObject({
      met: null,
      ratio: null,
      measured: "Python baseline skipped",
      note: "missing module: zmq",
    });
  });

  it("says a goal was not measured, and why, when its figures are missing", () => {
    const d = doc();
    d.probe = { missing: "run pnpm probe" };
    d.latency = [lat("product", 256, 0.9, 2.4)]; // no direct runs, no 1024-stream run
    d.throughput = d.throughput
      .filter((t) => !(t.runner === "ceiling" && t.streams === 1024))
      .map((t) => (t.runner === "product" && t.streams === 256 ? { ...t, cpu: undefined } : t));
    const g = computeGoals(d);
    const find = (text: string) => g.find((r) => r.goal.startsWith(text))!;
    const notMeasured = { met: null, ratio: null };
    expect(find("blocked caller")).toMatchObject({
      ...notMeasured,
      measured: "not measured",
      note: "run pnpm probe",
    });
    expect(find("engine → consumer p50 vs direct, 256")).toMatchObject({
      ...notMeasured,
      measured: "not measured",
    });
    expect(find("engine → consumer p99 vs direct, 256")).toMatchObject(notMeasured);
    expect(find("engine → consumer p50 vs direct, 1024")).toMatchObject(notMeasured);
    expect(find("frontend CPU per delivered output vs the ceiling's, 256")).toMatchObject({
      ...notMeasured,
      measured: "not measured",
    });
    expect(find("frontend CPU per delivered output vs the ceiling's, 1024")).toMatchObject(notMeasured);
    expect(find("delivered outputs/s vs the single-thread ceiling, 1024")).toMatchObject(notMeasured);
    expect(find("delivered outputs/s vs the single-thread ceiling, 256")).toMatchObject({ met: true });
    expect(find("stretch:")).toMatchObject(notMeasured);
    // A probe document without the hop's p99
    const noFloor = doc();
    if (!("missing" in noFloor.probe)) noFloor.probe.goal = { ...noFloor.probe.goal, floorP99Ms: null };
    expect(computeGoals(noFloor).find((r) => r.goal.startsWith("blocked caller"))).toMatchObject(notMeasured);
  });
});

describe("renderMarkdown", () => {
  it("has the command, the machine, the goal table and every section", () => {
    const d = doc();
    const md = renderMarkdown({ ...d, goals: computeGoals(d), profile: undefined });
    expect(md).toContain("Reproduce: `pnpm bench`");
    expect(md).toContain("CPU, 2 cores, 8 GiB, Linux, Node v20");
    for (const section of [
      "## Goals",
      "## 1. Codec",
      "## 2. End to end",
      "## 3. Latency",
      "## 4. Baseline",
      "## 5. Memory",
    ]) {
      expect(md).toContain(section);
    }
    expect(md).toContain("**missed**");
    expect(md).toContain("no codec results");
    expect(md).not.toContain("Some scenarios failed");
  });

  it("lists failed scenarios at the top", () => {
    const d = { ...doc(), errors: ["throughput python 1024 mock: killed"] };
    const md = renderMarkdown({ ...d, goals: computeGoals(d), profile: undefined });
    expect(md.indexOf("throughput python 1024 mock: killed")).toBeLessThan(md.indexOf("## Goals"));
  });

  it("puts the slow reader's baseline-vs-slow figures, their ratios and the memory into the memory section", () => {
    const d = { ...doc(), memory: { openStreams: undefined, slowReader: slowReader() } };
    const md = renderMarkdown({ ...d, goals: computeGoals(d), profile: undefined });
    const memory = md.slice(md.indexOf("## 5. Memory"));
    expect(memory).toContain(
      "| engine → consumer delay p50 | 1.00 ms | 1.50 ms | 1.50× | 1.00 ms / 1.00 ms |",
    );
    expect(memory).toContain(
      "| engine → consumer delay p99 | 4.00 ms | 6.00 ms | 1.50× | 4.00 ms / 4.00 ms |",
    );
    expect(memory).toContain("| engine steps/s (engine clock) | 2000/s | 1900/s | 0.95× | 2000/s / 2000/s |");
    expect(memory).toContain("| engine process CPU | 0.90 | 0.80 | 0.89× | 0.90 / 0.90 |");
    expect(memory).toContain("| slow window peak (3 samples) | 130.0 MiB | 6.0 MiB |");
    expect(memory).toContain(
      "the slow stream received 18260 tokens in\n97 reads (nominally 100: its timer fires late on the busy consumer thread) plus 188 queued unread",
    );
    expect(memory).toContain("had not drained");
  });
});
