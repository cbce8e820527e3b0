// The scheduler-stats listeners of one thread's connection. An engine's SchedulerStats reach this thread in
// its own decode of a step's frames, or, when the step sent it no frames (or the stats came alone), relayed by
// the runtime (runtime-thread/connection.ts onSchedulerStats); either way each listener gets them once.
import type { SchedulerStats } from "@vllm-engine-core/protocol";
import { unpackArgs } from "../cloneable.js";

export type SchedulerStatsListener = (engineIndex: number, stats: SchedulerStats) => void;

export class SchedulerStatsListeners {
  readonly #listeners = new Set<SchedulerStatsListener>();

  add(listener: SchedulerStatsListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `packed`: stats relayed alone by the runtime (packArgs form). */
  emitPacked(engineIndex: number, packed: SchedulerStats): void {
    if (this.#listeners.size === 0) return;
    this.emitDecoded(engineIndex, unpackArgs(packed) as SchedulerStats);
  }

  /** Stats this thread decoded itself (a step's frames). A throwing listener does not stop the others. */
  emitDecoded(engineIndex: number, stats: SchedulerStats): void {
    if (this.#listeners.size === 0) return;
    for (const listener of [...this.#listeners]) {
      try {
        listener(engineIndex, stats);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
