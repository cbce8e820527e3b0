// Data-parallel engine choice for a request without a pinned dataParallelRank, from each engine's load:
//  - without a coordinator that publishes counts: the lowest `max(inFlight, running + waiting)`, running and
//    waiting from the engine's latest SchedulerStats, in-flight alone before any stats arrived; ties go to
//    the first engine (vLLM's Rust client: rust/src/engine-core-client/src/client/state.rs
//    EngineRoutingState::routing_score, RequestRegistry min_by_key over engines in id order);
//  - with published counts (external DP coordinator, `[waiting, running(, kv_cache_usage)]` per engine):
//    Python's DPLBAsyncMPClient.get_core_engine_for_request (vllm/v1/engine/core_client.py) — the score
//    `max(client_count * inFlight, waiting + running)` plus the KV-pressure penalty on waiting requests, a
//    scan from a start index that rotates after every pick, and the picked engine's waiting count bumped
//    locally until the next publish; before the first publish with counts, on zeros (DPAsyncMPClient's
//    initial lb_engines), so the rotation and the bumps spread an idle start too.
import type { EngineLoadCounts } from "@vllm-engine-core/protocol";

/** The engine's latest reported scheduler counts (SchedulerStats.num_running_reqs / num_waiting_reqs). */
export interface ReportedLoad {
  running: number;
  waiting: number;
}

/** What the choice reads of one engine. */
export interface EngineLoadView {
  readonly index: number;
  /** This connection's requests routed there that have not finished. */
  readonly inflight: number;
  readonly dead: unknown;
  /** Undefined until the engine's first SchedulerStats. */
  reported?: ReportedLoad | undefined;
}

/** Keeps the engine's latest counts for routing. The Rust client reads num_waiting_reqs (not the skipped queue). */
export function recordReportedLoad(
  engine: EngineLoadView,
  stats: { numRunningReqs: number; numWaitingReqs: number },
): void {
  engine.reported = { running: stats.numRunningReqs, waiting: stats.numWaitingReqs };
}

/** Rust's EngineRoutingState::routing_score: stats raise the local view, never lower it below in-flight. */
export function routingScore(engine: EngineLoadView): number {
  const reported = engine.reported;
  if (reported === undefined) return engine.inflight;
  return Math.max(engine.inflight, reported.running + reported.waiting);
}

/** Lowest routingScore among live engines; the first one on ties. */
export function leastLoaded<E extends EngineLoadView>(engines: readonly E[]): E | undefined {
  let best: E | undefined;
  let bestScore = 0;
  for (const engine of engines) {
    if (engine.dead !== undefined) continue;
    const score = routingScore(engine);
    if (best === undefined || score < bestScore) {
      best = engine;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Python's published-counts balancer, one per connection. `clientCount` is the number of frontends
 * sharing the engines (vLLM's api-server count; 1 when unknown).
 */
export class PublishedCountsBalancer {
  #startIndex: number;
  readonly #clientCount: number;
  /** The publish the local bumps apply to, and its mutable copy. */
  #source: readonly EngineLoadCounts[] | null = null;
  #counts: [number, number, number][] = [];
  /** `lb_engines = [[0, 0, 0.0] for _ in self.core_engines]`, by DP rank: the counts before any publish. */
  #initial: EngineLoadCounts[] | undefined;

  constructor(engineCount: number, clientIndex: number, clientCount = 1) {
    this.#clientCount = Math.max(1, clientCount);
    // eng_start_index = (len(core_engines) * client_index) // client_count; with one known client the
    // frontends still start apart: client_index modulo the engine count.
    const n = Math.max(1, engineCount);
    this.#startIndex =
      this.#clientCount > 1 ? Math.floor((n * clientIndex) / this.#clientCount) % n : clientIndex % n;
  }

  /**
   * The engine to use, or undefined when `counts` does not cover the engines (then use leastLoaded).
   * `counts` null or undefined: nothing published yet. `engines` must be the same list, in the same order,
   * on every call.
   */
  pick<E extends EngineLoadView>(
    engines: readonly E[],
    published: readonly EngineLoadCounts[] | null | undefined,
  ): E | undefined {
    // Counts are global, by DP rank: each engine reads its rank's entry (Python slices them the same way).
    const counts = published ?? this.#initialCounts(engines);
    const n = engines.length;
    if (n === 0 || engines.some((engine) => counts[engine.index] === undefined)) return undefined;
    if (counts !== this.#source) {
      this.#source = counts;
      this.#counts = engines.map((engine) => {
        const [waiting, running, usage] = counts[engine.index]!;
        return [waiting, running, usage ?? 0];
      });
    }
    let best = -1;
    let bestScore = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      const idx = (this.#startIndex + i) % n;
      const engine = engines[idx]!;
      if (engine.dead !== undefined) continue;
      const [waiting, running, kvCacheUsage] = this.#counts[idx]!;
      let score = Math.max(this.#clientCount * engine.inflight, waiting + running);
      // Waiting requests weigh more on a KV-bound engine: 0 at <= 50% usage, up to 3x waiting at 100%.
      if (waiting > 0) score += waiting * 6 * Math.max(0, kvCacheUsage - 0.5);
      if (score < bestScore) {
        bestScore = score;
        best = idx;
      }
    }
    if (best < 0) return undefined;
    // "Increment local waiting count for better balancing between stats updates from the coordinator."
    this.#counts[best]![0] += this.#clientCount;
    // Rotate the scan start so that ties do not always favour the same engine.
    this.#startIndex = (this.#startIndex + 1) % n;
    return engines[best];
  }

  #initialCounts(engines: readonly EngineLoadView[]): readonly EngineLoadCounts[] {
    this.#initial ??= Array.from(
      { length: Math.max(0, ...engines.map((engine) => engine.index)) + 1 },
      (): EngineLoadCounts => [0, 0, 0],
    );
    return this.#initial;
  }
}
