// The clock every latency figure is read on: CLOCK_MONOTONIC, in milliseconds. It is one kernel clock for
// every process and thread of the host, and the clock vLLM stamps EngineCoreOutputs.timestamp with
// (`time.monotonic()`; the mock engine's monotonic stamps read it through process.hrtime). The realtime-based
// `performance.timeOrigin + performance.now()` used before is not: each process and thread fixes its own
// origin when it starts, so two of them disagree by whatever the realtime clock was stepped or slewed in
// between (one bench run read a single-stream delay of -2 ms that way).
import { performance } from "node:perf_hooks";

/**
 * performance.now() counts CLOCK_MONOTONIC (libuv's uv_hrtime) from this thread's start, so one offset
 * turns it into the absolute clock without a BigInt per reading. Read naively (one call after the other)
 * the offset came out 50 µs to 2.4 ms low here (cold first calls, preemption); so it is taken from the
 * narrowest of 64 now → hrtime → now brackets, at the bracket's midpoint.
 */
function calibrate(): number {
  let best = Number.POSITIVE_INFINITY;
  let offset = 0;
  for (let i = 0; i < 64; i++) {
    const before = performance.now();
    const hr = Number(process.hrtime.bigint()) / 1e6;
    const after = performance.now();
    if (after - before < best) {
      best = after - before;
      offset = hr - (before + after) / 2;
    }
  }
  return offset;
}

const OFFSET_MS = calibrate();

/** CLOCK_MONOTONIC now, in milliseconds (fractional); comparable across the host's processes. */
export function monotonicNowMs(): number {
  return performance.now() + OFFSET_MS;
}
