// The `scheduler_stats` of an EngineCoreOutputs message, decoded alone: the fields before it are skipped by
// their msgpack headers (readOutputRoute's walk), the fields after it are not looked at. For a thread that
// routes output messages without decoding them (it learns `hasSchedulerStats` from readOutputRoute) but
// needs the engine's counts: engines send stats once per step, so this costs one small decode per step.
import { skipValues } from "../msgpack/skip.js";
import { EngineCoreOutputsCodec, type SchedulerStats, SchedulerStatsCodec } from "../structs/output.js";
import type { OutputRoute } from "./route.js";
import { decodeFrames } from "./run.js";

const SCHEDULER_STATS = EngineCoreOutputsCodec.fields.findIndex((f) => f.wire === "scheduler_stats");
const NIL = 0xc0;

/** `[start, end)` of the non-nil `scheduler_stats` value in `main`, or null (see readSchedulerStats). */
function findSchedulerStats(main: Uint8Array): readonly [number, number] | null {
  const end = main.byteLength;
  if (end === 0) return null;
  const b = main[0]!;
  let fields: number;
  let pos: number;
  if ((b & 0xf0) === 0x90) {
    fields = b & 0x0f;
    pos = 1;
  } else if (b === 0xdc && end >= 3) {
    fields = (main[1]! << 8) | main[2]!;
    pos = 3;
  } else {
    return null;
  }
  if (fields <= SCHEDULER_STATS) return null;
  pos = skipValues(main, pos, end, SCHEDULER_STATS);
  if (pos < 0 || pos >= end || main[pos] === NIL) return null;
  const stop = skipValues(main, pos, end, 1);
  return stop < 0 ? null : [pos, stop];
}

/**
 * `scheduler_stats` of `main` (frame 0 of an output message), or null when it is nil, absent, or the
 * message's structure cannot be walked up to it. A present value that does not decode as SchedulerStats
 * throws the ProtocolError the full decoder would (struct "SchedulerStats"). With `route` (readOutputRoute of
 * the same `main`), the value is taken from where the route found it, so the frame is not walked twice.
 */
export function readSchedulerStats(main: Uint8Array, route?: OutputRoute): SchedulerStats | null {
  const span = route === undefined ? findSchedulerStats(main) : route.schedulerStatsSpan;
  if (span === null) return null;
  return decodeFrames(SchedulerStatsCodec, [main.subarray(span[0], span[1])], "SchedulerStats");
}
