// One connection on the runtime thread: the threads attached to it (their lanes), its requests' lives
// (live-requests.ts), its engines (engines.ts), utility calls (utility-calls.ts), the routing of outputs
// (output-router.ts), and what an engine's death or an undecodable message costs (output-faults.ts).
import type { ResolvedConfig } from "@vllm-engine-core/config";
import {
  ClientClosedError,
  EngineDeadError,
  type SerializedError,
  serializeError,
} from "@vllm-engine-core/errors";
import {
  type EngineCoreOutputs,
  type OutputRoute,
  type ProtocolError,
  type SchedulerStats,
  type UtilityOutput,
  withCurrentWave,
} from "@vllm-engine-core/protocol";
import { packArgs, unpackArgs } from "../cloneable.js";
import type {
  AbortResult,
  AttachResult,
  CallBody,
  ConnectionDiagnosticsWire,
  ConnectionInfoWire,
  RequestRef,
} from "../messages.js";
import { OutputDiagnostics } from "./diagnostics.js";
import type { EngineIO, EngineOutputSink } from "./engine-io.js";
import { recordReportedLoad } from "./engine-load.js";
import { type EngineState, Engines } from "./engines.js";
import type { ThreadLane } from "./lane.js";
import { byEngine, type LiveRequest, LiveRequests, tellOwners } from "./live-requests.js";
import { OutputFaultJudge } from "./output-faults.js";
import { OutputRouter, type RoutedConnection } from "./output-router.js";
import { RecentlyEnded } from "./recently-ended.js";
import { type UtilityBounds, UtilityCalls } from "./utility-calls.js";

type SubmitBody = Extract<CallBody, { t: "submit" }>;

/** Enough for every thread of a connection to report the same undecodable message. */
const RECENTLY_JUDGED_FORWARDS = 64;

export class ConnectionService implements EngineOutputSink, RoutedConnection {
  readonly connectionId: string;
  readonly info: ConnectionInfoWire;
  readonly requests = new LiveRequests();
  readonly diag = new OutputDiagnostics();
  /** The lanes of the threads attached to this connection. */
  readonly #lanes = new Set<ThreadLane>();
  readonly #io: EngineIO;
  readonly #opener: ThreadLane;
  readonly #onClosed: (connection: ConnectionService) => void;
  readonly #engines: Engines;
  readonly #utilities: UtilityCalls;
  readonly #router = new OutputRouter(this);
  readonly #faults = new OutputFaultJudge();
  /** Forwarded messages an owner could not decode, judged once (seq → what their requests fail with). */
  readonly #judgedForwards = new RecentlyEnded<number, Error>(RECENTLY_JUDGED_FORWARDS);
  #health: SerializedError | null = null;
  /** Another thread holds the handle (or the opener took the connect reply): it outlives its opener. */
  #adopted = false;
  #closed = false;
  #shuttingDown: Promise<void> | undefined;

  constructor(
    connectionId: string,
    io: EngineIO,
    config: ResolvedConfig,
    opener: ThreadLane,
    onClosed: (connection: ConnectionService) => void,
  ) {
    this.connectionId = connectionId;
    this.#io = io;
    this.#opener = opener;
    this.#onClosed = onClosed;
    this.#engines = new Engines(io, config.clientIndex);
    this.#utilities = new UtilityCalls(io, config.clientIndex);
    this.info = {
      inputAddress: io.inputAddress,
      outputAddress: io.outputAddress,
      engines: io.engines.map((engine) => ({
        index: engine.index,
        outputAddress: engine.outputAddress,
        readyResponse: engine.readyResponse,
      })),
      clientIndex: config.clientIndex,
      modelName: config.modelName,
    };
    this.#attachLane(opener);
  }

  attach(lane: ThreadLane): AttachResult {
    this.#assertOpen();
    if (lane !== this.#opener) this.#adopted = true;
    this.#attachLane(lane);
    return this.attachResult();
  }

  attachResult(): AttachResult {
    return { connectionId: this.connectionId, info: this.info, health: this.#health };
  }

  adopt(): void {
    this.#adopted = true;
  }

  // ---- calls --------------------------------------------------------------------------------

  async submit(lane: ThreadLane, body: SubmitBody): Promise<{ engineIndex: number }> {
    this.#assertAttached(lane);
    const engine = this.#engines.select(body.dataParallelRank);
    const request = this.requests.add(body.requestId, lane, body.slot, engine);
    try {
      let frames = body.frames;
      const coordinator = this.#io.coordinator;
      if (coordinator !== null) {
        // Encoded once on the submitting thread; the wave known now is stamped into the bytes.
        frames = withCurrentWave(frames, coordinator.state().currentWave);
        await coordinator.notifyRequest(engine.index);
      }
      await this.#io.send(engine.index, frames);
    } catch (error) {
      // Roll the registration back unless the request already ended (engine death, abort, shutdown).
      this.requests.end(request, "aborted");
      throw error;
    }
    return { engineIndex: engine.index };
  }

  async abort(lane: ThreadLane, requestIds: readonly string[]): Promise<AbortResult> {
    this.#assertAttached(lane);
    const aborted: LiveRequest[] = [];
    for (const requestId of requestIds) {
      const request = this.requests.get(requestId);
      if (request !== undefined && this.requests.end(request, "aborted")) aborted.push(request);
    }
    // Sinks on other threads end the way the caller's own (ended at once on its thread) do: `aborted`.
    tellOwners(aborted, null, lane);
    await this.#engines.sendAborts(byEngine(aborted));
    return { live: aborted.map((request) => [request.requestId, request.engine.index]) };
  }

  async callUtility(
    lane: ThreadLane,
    method: string,
    packedArgs: unknown[],
    bounds: UtilityBounds,
  ): Promise<{ engineIndex: number; output: UtilityOutput }[]> {
    this.#assertAttached(lane);
    const dead = this.#engines.firstDeath();
    if (dead !== undefined) throw dead;
    const engines = this.#engines.list;
    const outputs = await this.#utilities.call(engines, method, unpackArgs(packedArgs) as unknown[], bounds);
    // Results may hold Float64/MsgpackExt, which structured clone would flatten.
    return engines.map((engine, i) => ({
      engineIndex: engine.index,
      output: packArgs(outputs[i]!) as UtilityOutput,
    }));
  }

  diagnostics(lane: ThreadLane): ConnectionDiagnosticsWire {
    this.#assertAttached(lane);
    return this.diag.snapshot();
  }

  // ---- threads ------------------------------------------------------------------------------

  /** The thread stops using this connection: its live requests are aborted on their engines. */
  async detach(lane: ThreadLane): Promise<void> {
    if (!this.#lanes.delete(lane)) return;
    lane.connection = undefined;
    const owned = this.requests.endWhere((request) => request.lane === lane, "aborted");
    await this.#engines.sendAborts(byEngine(owned));
  }

  /** The thread's lane closed. A connection nobody adopted dies with its opener (nobody else can hold it). */
  async laneGone(lane: ThreadLane): Promise<void> {
    await this.detach(lane);
    if (!this.#adopted && lane === this.#opener) {
      await this.shutdown(new ClientClosedError({ detail: "the thread that opened the connection exited" }));
    }
  }

  /** Closes the connection for every thread and closes its sockets. Idempotent: later calls wait for the first. */
  shutdown(error: Error = new ClientClosedError({ detail: "the connection was shut down" })): Promise<void> {
    this.#shuttingDown ??= this.#closeAll(error);
    return this.#shuttingDown;
  }

  async #closeAll(error: Error): Promise<void> {
    if (this.#closed) return; // closeSockets() came first (process exit)
    this.#closed = true;
    this.diag.close();
    const serialized = serializeError(error);
    for (const lane of this.#lanes) {
      lane.post({ t: "closed", error: serialized });
      lane.connection = undefined;
    }
    this.#lanes.clear();
    this.#utilities.failAll(error);
    // Best effort: tell the engines to stop working for nobody before the sockets go.
    await this.#engines.sendAborts(byEngine(this.requests.clear())).catch(() => {});
    try {
      await this.#io.close();
    } finally {
      this.#onClosed(this);
    }
  }

  /** Process exit or runtime crash: close the sockets, tell nobody (the lanes hear it from the runtime). */
  async closeSockets(): Promise<void> {
    this.#closed = true;
    this.diag.close();
    this.#utilities.failAll(new ClientClosedError());
    this.requests.clear();
    await this.#io.close();
  }

  // ---- engine events (OutputSink, RoutedConnection) -----------------------------------------

  onOutputs(route: OutputRoute, frames: Buffer[], senders: readonly number[]): void {
    if (!this.#closed) this.#router.route(route, frames, senders);
  }

  consume(outputs: EngineCoreOutputs): void {
    const reply = outputs.utilityOutput;
    if (reply !== null) {
      const outcome = this.#utilities.resolve(outputs.engineIndex, reply);
      if (outcome === "late") this.diag.lateUtilityReply();
      else if (outcome === "unknown") this.diag.unknownUtilityReply(outputs.engineIndex, reply.callId);
    }
    if (outputs.schedulerStats !== null) this.onSchedulerStats(outputs.engineIndex, outputs.schedulerStats);
  }

  /**
   * Routing load, and the stats every thread of the connection sees (vLLM sends them to one client).
   * `informed`: threads that read these stats in their own decode of the step's frames (OutputRouter).
   */
  onSchedulerStats(engineIndex: number, stats: SchedulerStats, informed?: ReadonlySet<ThreadLane>): void {
    const engine = this.#engines.get(engineIndex);
    if (engine === undefined) return;
    recordReportedLoad(engine, stats);
    let packed: SchedulerStats | undefined;
    for (const lane of this.#lanes) {
      if (informed?.has(lane)) continue;
      // The opaque sub-structures (kv_connector_stats, perf_stats, ...) may hold Float64/MsgpackExt.
      packed ??= packArgs(stats) as SchedulerStats;
      lane.post({ t: "stats", engineIndex, stats: packed });
    }
  }

  onEngineDead(engineIndex: number | null, reason: string): void {
    if (this.#closed) return;
    // null: the transport lost every engine at once (the DP coordinator is gone).
    const engines = engineIndex === null ? this.#engines.list : [this.#engines.get(engineIndex)];
    for (const engine of engines) {
      if (engine === undefined) continue;
      this.#engineDied(
        engine,
        new EngineDeadError({ engineIndex: engineIndex === null ? null : engine.index, reason }),
      );
    }
  }

  /** An output message that could not be decoded: fail what it concerns (see output-faults.ts). */
  onBadMessage(error: ProtocolError, frames: readonly Uint8Array[], senders: readonly number[]): void {
    if (!this.#closed) this.#judgeBadMessage(error, frames, senders);
  }

  /**
   * An owner thread could not decode a forwarded message (`seq`): judge it as any undecodable message, once
   * however many threads report it, and fail the reporter's requests it named (`live`, still live on that
   * thread; those the message finished were already ended here).
   */
  onForwardedUndecodable(
    lane: ThreadLane,
    report: {
      seq: number;
      senders: readonly number[];
      frames: Uint8Array[];
      error: ProtocolError;
      live: RequestRef[];
    },
  ): void {
    if (this.#closed) return;
    // Those the message finished ended here before the thread could decode it: not counted by the verdict.
    const forgotten = report.live.filter(([requestId]) => this.requests.get(requestId) === undefined);
    let failedWith = this.#judgedForwards.get(report.seq);
    if (failedWith === undefined) {
      failedWith = this.#judgeBadMessage(report.error, report.frames, report.senders);
      this.#judgedForwards.add(report.seq, failedWith);
    }
    if (report.live.length === 0) return;
    lane.post({ t: "ended", requests: report.live, error: serializeError(failedWith) });
    this.diag.failedByProtocolError({ requests: forgotten.length });
  }

  // ---- internals ----------------------------------------------------------------------------

  /** Returns the error the requests the message names fail with. */
  #judgeBadMessage(error: ProtocolError, frames: readonly Uint8Array[], senders: readonly number[]): Error {
    const live = senders.filter((index) => this.#engines.get(index)?.dead === undefined);
    const verdict = this.#faults.judge(error, frames, live);
    this.diag.badMessage(verdict.kind === "engines" ? (verdict.errors[0] ?? error) : verdict.error);
    if (verdict.kind === "requests") {
      const engine = this.#engines.get(verdict.engineIndex)!;
      const failed = verdict.requestIds
        .map((requestId) => this.requests.get(requestId))
        // Another engine's request: this engine's message cannot carry its output.
        .filter((request): request is LiveRequest => request?.engine === engine)
        .filter((request) => this.requests.end(request, "aborted"));
      tellOwners(failed, serializeError(verdict.error));
      this.diag.failedByProtocolError({ requests: failed.length });
      if (failed.length > 0) void this.#engines.sendAborts(byEngine(failed)).catch(() => {});
      return verdict.error;
    }
    if (verdict.kind === "utility") {
      if (this.#utilities.fail(verdict.callId, verdict.engineIndex, verdict.error)) {
        this.diag.failedByProtocolError({ utilityCalls: 1 });
      } else {
        this.diag.unknownUtilityReply(verdict.engineIndex, verdict.callId);
      }
      return verdict.error;
    }
    for (const engineError of verdict.errors) {
      const engine = this.#engines.get(engineError.engineIndex!)!;
      const { requests, utilityCalls } = this.#engineDied(engine, engineError);
      this.diag.failedByProtocolError({ requests: requests.length, utilityCalls, engines: 1 });
      if (requests.length > 0) {
        this.#engines.abortEvenIfDead(
          engine,
          requests.map((request) => request.requestId),
        );
      }
    }
    // No live sender left: the engine was already dead, and its error is what its requests fail with.
    return (
      verdict.errors[0] ?? senders.map((index) => this.#engines.get(index)?.dead).find((e) => e) ?? error
    );
  }

  /** The one place an engine's death is handled: health, its live requests and utility calls fail. */
  #engineDied(
    engine: EngineState,
    error: EngineDeadError | ProtocolError,
  ): { requests: LiveRequest[]; utilityCalls: number } {
    if (!this.#engines.markDead(engine, error)) return { requests: [], utilityCalls: 0 };
    this.#setHealth(error);
    const requests = this.requests.endWhere((request) => request.engine === engine, "aborted");
    tellOwners(requests, serializeError(error));
    return { requests, utilityCalls: this.#utilities.failEngine(engine, error) };
  }

  #attachLane(lane: ThreadLane): void {
    this.#lanes.add(lane);
    lane.connection = this;
  }

  #setHealth(error: Error): void {
    if (this.#health !== null) return;
    this.#health = serializeError(error);
    for (const lane of this.#lanes) lane.post({ t: "health", error: this.#health });
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClientClosedError({ detail: "the connection was shut down" });
  }

  #assertAttached(lane: ThreadLane): void {
    this.#assertOpen();
    if (!this.#lanes.has(lane))
      throw new ClientClosedError({ detail: "this thread is not attached to the connection" });
  }
}
