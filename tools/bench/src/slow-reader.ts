// Figures of the slow-reader run derived from its windows: slow-window / baseline ratios and the
// baseline's CPU (its two windows, weighted by their length). Pure.
import type { FastStreamsWindow } from "./fast-window.js";
import type { CpuReport, SlowReaderRatios } from "./types.js";

/** Slow window over baseline for the fast streams: > 1 means larger (delay) or faster (rates). */
export function slowToBaseline(slow: FastStreamsWindow, baseline: FastStreamsWindow): SlowReaderRatios {
  return {
    delayP50: slow.delay.p50 / baseline.delay.p50,
    delayP99: slow.delay.p99 / baseline.delay.p99,
    deliveredTokensPerSec: slow.deliveredTokensPerSec / baseline.deliveredTokensPerSec,
    engineStepsPerSec: slow.engineStepsPerSec / baseline.engineStepsPerSec,
  };
}

/** Duration-weighted mean of two CPU reports (a thread missing from one counts as idle there). */
export function averageCpu(
  a: CpuReport | undefined,
  aMs: number,
  b: CpuReport | undefined,
  bMs: number,
): CpuReport | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  const wa = aMs / (aMs + bMs);
  const wb = 1 - wa;
  const mean = (x: number | undefined, y: number | undefined) =>
    x === undefined || y === undefined ? undefined : x * wa + y * wb;
  const threads = new Map<number, { label: string; tid: number; cpu: number }>();
  for (const [t, w] of [
    ...a.threads.map((t) => [t, wa] as const),
    ...b.threads.map((t) => [t, wb] as const),
  ]) {
    const entry = threads.get(t.tid) ?? { label: t.label, tid: t.tid, cpu: 0 };
    entry.cpu += t.cpu * w;
    threads.set(t.tid, entry);
  }
  return {
    engine: mean(a.engine, b.engine),
    frontend: mean(a.frontend, b.frontend),
    threads: [...threads.values()].sort((x, y) => y.cpu - x.cpu),
  };
}
