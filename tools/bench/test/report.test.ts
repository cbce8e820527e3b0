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
) {
  return {
    engine,
    runner,
    streams,
    outputsPerSec: rate,
    tokens: 1,
    merged: 0,
    windowMs: 3000,
    cpu: undefined,
    ...(skipped ? { skipped } : {}),
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
      goal: { measuredMs: 0.5, met: true, floorP99Ms: 0.4, limitMs: 1 },
    },
    floor: summarize([0.1, 0.2, 0.3]),
    throughput: [
      tp("replay", "ceiling", 256, 1_000_000),
      tp("replay", "product", 256, 900_000),
      tp("replay", "product-metrics", 256, 850_000),
      tp("replay", "python", 256, 300_000),
      tp("replay", "ceiling", 1024, 2_000_000),
      tp("replay", "product", 1024, 1_500_000),
      tp("replay", "product-metrics", 1024, 1_200_000),
      tp("replay", "python", 1024, 400_000),
      tp("mock", "ceiling", 256, 600_000),
      tp("mock", "product", 256, 600_000),
      tp("mock", "ceiling", 1024, 500_000),
      tp("mock", "product", 1024, 500_000),
      tp("mock", "python", 1024, Number.NaN, "missing module: zmq"),
    ],
    latency: [
      {
        runner: "product",
        streams: 256,
        caller: "idle",
        stepMs: 10,
        delay: summarize([0.15, 0.18, 0.9]),
        merged: 0,
        cpu: undefined,
      },
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
  const byGoal = (text: string) => goals.find((g) => g.goal.startsWith(text))!;

  it("judges the ceiling ratio against 0.8 and the Python ratio against 3", () => {
    const ceiling256 = goals.find((g) => g.goal.includes("ceiling, 256") && g.goal.includes("replay"))!;
    expect(ceiling256.met).toBe(true); // 0.9 ≥ 0.8
    expect(ceiling256.ratio).toBeCloseTo(0.9 / 0.8);
    const ceiling1024 = goals.find((g) => g.goal.includes("ceiling, 1024") && g.goal.includes("replay"))!;
    expect(ceiling1024.met).toBe(false); // 0.75 < 0.8
    const python = goals.find((g) => g.goal.includes("Python") && g.goal.includes("replay"))!;
    expect(python.measured).toContain("3.75×");
    expect(python.met).toBe(true);
  });

  it("judges the product with metrics instrumented against 0.9× the plain product, same run", () => {
    const at = (streams: number) =>
      goals.find(
        (g) =>
          g.goal.includes(`metrics instrumented vs plain product, ${streams}`) && g.goal.includes("replay"),
      )!;
    expect(at(256)).toMatchObject({ met: true }); // 0.94 ≥ 0.9
    expect(at(256).measured).toContain("0.94×");
    expect(at(1024)).toMatchObject({ met: false }); // 0.8 < 0.9
    const mock = goals.find((g) => g.goal.includes("metrics instrumented") && g.goal.includes("mock"))!;
    expect(mock).toMatchObject({ met: null, ratio: null }); // not measured in this document
  });

  it("reports a skipped baseline as not measured, with the reason", () => {
    const python = goals.find((g) => g.goal.includes("Python") && g.goal.includes("mock"))!;
    expect(python).toMatchObject({
      met: null,
      ratio: null,
      measured: "Python baseline skipped",
      note: "missing module: zmq",
    });
  });

  it("takes the blocked-caller goal from the probe and the latency goals from the 256-stream idle run", () => {
    expect(byGoal("blocked caller")).toMatchObject({ met: true, measured: "500 µs" });
    expect(byGoal("engine → consumer p50")).toMatchObject({ met: true, measured: "180 µs" }); // p50 of 3 samples
    expect(byGoal("engine → consumer p99")).toMatchObject({ met: true, measured: "900 µs" });
  });

  it("says why a goal could not be measured when the probe did not run", () => {
    const g = computeGoals({ ...doc(), probe: { missing: "run pnpm probe" } });
    expect(g[0]).toMatchObject({ met: null, note: "run pnpm probe" });
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
