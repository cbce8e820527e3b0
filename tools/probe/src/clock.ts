// Wall-clock time with sub-millisecond resolution, comparable across processes on one host:
// performance.timeOrigin is the realtime clock at thread start, performance.now() the monotonic time since.
import { performance } from "node:perf_hooks";

/** Epoch milliseconds (fractional). */
export function wallNowMs(): number {
  return performance.timeOrigin + performance.now();
}
