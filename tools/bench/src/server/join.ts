// Pure helpers of the server scenario: joining the load generator's SSE arrivals with the engine stamps
// the server read, per token count, and the inter-event gaps of the streams inside a time interval.
import { LogHistogram } from "../histogram.js";
import type { StreamRecord } from "./load-protocol.js";
import type { EngineStamps } from "./stamped-client.js";

/** Arrivals inside [from, to] (CLOCK_MONOTONIC ms); everything when the bounds are omitted. */
export interface Interval {
  from?: number;
  to?: number;
}

const inside = (t: number, i: Interval) =>
  (i.from === undefined || t >= i.from) && (i.to === undefined || t <= i.to);

/**
 * Engine send → SSE bytes at the client, per event: the event's cumulative token count names the engine
 * output the server sent in it (the newest one when several were merged). Index 0 of a record is the
 * count before recording started, not an event. Returns the histogram and how many events found no stamp.
 */
export function sseDelays(
  records: readonly StreamRecord[],
  stamps: ReadonlyMap<string, EngineStamps>,
  interval: Interval = {},
): { delay: LogHistogram; unmatched: number } {
  const delay = new LogHistogram();
  let unmatched = 0;
  for (const r of records) {
    const s = stamps.get(r.id);
    let k = 0;
    for (let j = 1; j < r.counts.length; j++) {
      const at = r.arrivals[j]!;
      if (!inside(at, interval)) continue;
      const count = r.counts[j]!;
      if (s === undefined) {
        unmatched++;
        continue;
      }
      while (k < s.counts.length && s.counts[k]! < count) k++;
      if (k < s.counts.length && s.counts[k] === count) delay.add(at - s.stamps[k]!);
      else unmatched++;
    }
  }
  return { delay, unmatched };
}

/** Time between consecutive SSE events of each stream, for events arriving inside the interval. */
export function interEventGaps(records: readonly StreamRecord[], interval: Interval = {}): LogHistogram {
  const gaps = new LogHistogram();
  for (const r of records) {
    for (let j = 2; j < r.arrivals.length; j++) {
      const at = r.arrivals[j]!;
      if (inside(at, interval)) gaps.add(at - r.arrivals[j - 1]!);
    }
  }
  return gaps;
}
