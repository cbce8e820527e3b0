// The scheduler-stats listeners of one thread's connection: the runtime relays every engine's SchedulerStats
// (runtime-thread/stats-relay.ts) and this thread hands them, unpacked, to each listener.
import type { SchedulerStats } from "@vllm-engine-core/protocol";
import { unpackArgs } from "../cloneable.js";

export type SchedulerStatsListener = (engineIndex: number, stats: SchedulerStats) => void;

export class SchedulerStatsListeners {
  readonly #listeners = new Set<SchedulerStatsListener>();

  add(listener: SchedulerStatsListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** `packed`: the relayed stats (packArgs form). A throwing listener does not stop the others. */
  emit(engineIndex: number, packed: SchedulerStats): void {
    if (this.#listeners.size === 0) return;
    const stats = unpackArgs(packed) as SchedulerStats;
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
