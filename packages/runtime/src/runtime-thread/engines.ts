// The engines of one connection: their state (in-flight requests, reported load, death), the choice of an
// engine for a request, and where an engine's death is recorded (once). Aborts go out per engine, never to
// a dead one.
import { EngineDeadError, InvalidDataParallelRankError } from "@vllm-engine-core/errors";
import { encodeAbortRequest, type ProtocolError } from "@vllm-engine-core/protocol";
import type { EngineIO } from "./engine-io.js";
import {
  type EngineLoadView,
  leastLoaded,
  PublishedCountsBalancer,
  type ReportedLoad,
} from "./engine-load.js";

export interface EngineState extends EngineLoadView {
  readonly index: number;
  /** Requests routed here that have not finished. */
  inflight: number;
  /** EngineDeadError from the transport, or the ProtocolError of an output message that made it dead. */
  dead: EngineDeadError | ProtocolError | undefined;
  /** Latest SchedulerStats counts (engine-load.ts). */
  reported?: ReportedLoad | undefined;
}

export class Engines {
  /** In identity order: ties in engine selection go to the first. */
  readonly list: readonly EngineState[];
  readonly #byIndex = new Map<number, EngineState>();
  readonly #io: EngineIO;
  readonly #published: PublishedCountsBalancer;

  constructor(io: EngineIO, clientIndex: number) {
    this.#io = io;
    this.list = io.engines.map((engine) => ({ index: engine.index, inflight: 0, dead: undefined }));
    for (const engine of this.list) this.#byIndex.set(engine.index, engine);
    this.#published = new PublishedCountsBalancer(this.list.length, clientIndex);
  }

  get(index: number): EngineState | undefined {
    return this.#byIndex.get(index);
  }

  /** The error of the first dead engine, if any (a utility call needs every engine). */
  firstDeath(): EngineDeadError | ProtocolError | undefined {
    return this.list.find((engine) => engine.dead !== undefined)?.dead;
  }

  /** Explicit rank → that engine; otherwise the least loaded live engine (engine-load.ts). */
  select(rank: number | null): EngineState {
    if (rank !== null) {
      const engine = this.#byIndex.get(rank);
      if (engine === undefined) {
        throw new InvalidDataParallelRankError({ rank, engineIndices: this.list.map((e) => e.index) });
      }
      if (engine.dead !== undefined) throw engine.dead;
      return engine;
    }
    // With an external coordinator, Python's published-counts choice (on zeros until the first publish).
    const coordinator = this.#io.coordinator;
    const best =
      (coordinator?.mode === "external"
        ? this.#published.pick(this.list, coordinator.state().counts)
        : undefined) ?? leastLoaded(this.list);
    if (best === undefined) {
      throw (
        this.list[0]?.dead ??
        new EngineDeadError({ engineIndex: null, reason: "the connection has no live engine" })
      );
    }
    return best;
  }

  /** Records the engine's death; false when it was dead already (its death is handled once). */
  markDead(engine: EngineState, error: EngineDeadError | ProtocolError): boolean {
    if (engine.dead !== undefined) return false;
    engine.dead = error;
    return true;
  }

  /**
   * One ABORT per engine; a dead engine gets none, and neither does one whose connection is found gone by
   * the send (EngineDeadError: it vanished, its death is reported after the vanish grace): there is nothing
   * left to stop there. Any other send failure is rethrown (the first) after all were tried.
   */
  async sendAborts(byEngine: Map<EngineState, string[]>): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const [engine, requestIds] of byEngine) {
      if (engine.dead === undefined) sends.push(this.#io.send(engine.index, encodeAbortRequest(requestIds)));
    }
    const results = await Promise.allSettled(sends);
    const failed = results.find(
      (r): r is PromiseRejectedResult => r.status === "rejected" && !(r.reason instanceof EngineDeadError),
    );
    if (failed !== undefined) throw failed.reason;
  }

  /** Best effort, also to an engine just declared dead: its process may still be generating them. */
  abortEvenIfDead(engine: EngineState, requestIds: string[]): void {
    void this.#io.send(engine.index, encodeAbortRequest(requestIds)).catch(() => {});
  }
}
