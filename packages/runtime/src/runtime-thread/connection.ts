// One connection on the runtime thread: the request registry (request id → owner thread, engine), engine
// selection, utility calls, health, and the per-thread routing of engine outputs.
import type { ResolvedConfig } from "@vllm-engine-core/config";
import {
  ClientClosedError,
  DuplicateRequestIdError,
  EngineDeadError,
  InvalidDataParallelRankError,
  type SerializedError,
  serializeError,
  UtilityTimeoutError,
} from "@vllm-engine-core/errors";
import {
  decodeOutputMessage,
  encodeAbortRequest,
  encodeUtilityCall,
  type OutputMessage,
  type OutputRoute,
  ProtocolError,
  readSchedulerStats,
  type SchedulerStats,
  type UtilityOutput,
  withCurrentWave,
} from "@vllm-engine-core/protocol";
import {
  type AbortResult,
  type AttachResult,
  type CallBody,
  type ConnectionDiagnosticsWire,
  type ConnectionInfoWire,
  packArgs,
  unpackArgs,
} from "../messages.js";
import { OutputDiagnostics } from "./diagnostics.js";
import type { EngineIO, EngineOutputSink } from "./engine-io.js";
import {
  leastLoaded,
  PublishedCountsBalancer,
  type ReportedLoad,
  recordReportedLoad,
} from "./engine-load.js";
import { OutputFaultJudge } from "./output-faults.js";
import type { ThreadPeer } from "./peer.js";
import { type EndedHow, RecentlyEnded } from "./recently-ended.js";
import { RequestRegistry } from "./request-registry.js";
import { relaySchedulerStats } from "./stats-relay.js";

interface EngineState {
  readonly index: number;
  /** Requests routed here that have not finished. */
  inflight: number;
  /** EngineDeadError from the transport, or the ProtocolError of an output message that made it dead. */
  dead: EngineDeadError | ProtocolError | undefined;
  /** Latest SchedulerStats counts (engine-load.ts). */
  reported?: ReportedLoad | undefined;
}

interface TrackedRequest {
  readonly requestId: string;
  readonly owner: ThreadPeer;
  /** The owner thread's slot for it (CallMap submit): what forwarded frames name it by. */
  readonly slot: number;
  readonly engine: EngineState;
}

interface PendingUtility {
  readonly engine: EngineState;
  resolve(output: UtilityOutput): void;
  reject(error: Error): void;
}

type SubmitBody = Extract<CallBody, { t: "submit" }>;

/** The caller's bounds of one utility call (see RuntimeConnection.callUtility). */
export interface UtilityBounds {
  timeoutMs?: number | null;
  signal?: AbortSignal;
}

/** Utility calls that timed out or were aborted lately (call id → engine), so late replies are told apart. */
const RECENTLY_CANCELLED_CALLS = 4_096;
/** Enough for every thread of a connection to report the same undecodable message. */
const RECENTLY_JUDGED_FORWARDS = 64;

export class ConnectionService implements EngineOutputSink {
  readonly id: string;
  readonly info: ConnectionInfoWire;
  /** Threads attached to this connection. */
  readonly peers = new Set<ThreadPeer>();
  private readonly io: EngineIO;
  private readonly clientIndex: number;
  private readonly opener: ThreadPeer;
  private readonly onClosed: (connection: ConnectionService) => void;
  /** In identity order: ties in engine selection go to the first. */
  private readonly engines: EngineState[];
  private readonly byIndex = new Map<number, EngineState>();
  private readonly requests = new RequestRegistry<TrackedRequest>();
  private readonly utilities = new Map<bigint, PendingUtility>();
  private nextCallId = 1n;
  private readonly diag = new OutputDiagnostics();
  private readonly faults = new OutputFaultJudge();
  private readonly ended = new RecentlyEnded();
  private readonly cancelledCalls = new RecentlyEnded<bigint, number>(RECENTLY_CANCELLED_CALLS);
  /** Output messages forwarded to owner threads (their `seq`). */
  private forwarded = 0;
  /** Forwarded messages an owner could not decode, judged once (seq → what their requests fail with). */
  private readonly judgedForwards = new RecentlyEnded<number, Error>(RECENTLY_JUDGED_FORWARDS);
  private readonly published: PublishedCountsBalancer;
  private health: SerializedError | null = null;
  private adopted = false;
  private closed = false;
  private shuttingDown: Promise<void> | undefined;

  constructor(
    id: string,
    io: EngineIO,
    config: ResolvedConfig,
    opener: ThreadPeer,
    onClosed: (connection: ConnectionService) => void,
  ) {
    this.id = id;
    this.io = io;
    this.opener = opener;
    this.onClosed = onClosed;
    this.clientIndex = config.clientIndex;
    this.engines = io.engines.map((engine) => ({ index: engine.index, inflight: 0, dead: undefined }));
    for (const engine of this.engines) this.byIndex.set(engine.index, engine);
    this.published = new PublishedCountsBalancer(this.engines.length, this.clientIndex);
    this.info = {
      inputAddress: io.inputAddress,
      outputAddress: io.outputAddress,
      engines: io.engines.map((engine) => ({
        index: engine.index,
        outputAddress: engine.outputAddress,
        readyResponse: engine.readyResponse,
      })),
      clientIndex: this.clientIndex,
      modelName: config.modelName,
    };
    this.attachPeer(opener);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  attach(peer: ThreadPeer): AttachResult {
    this.assertOpen();
    // Another thread holds the handle, so the connection is in use beyond its opener.
    if (peer !== this.opener) this.adopted = true;
    this.attachPeer(peer);
    return this.attachResult();
  }

  attachResult(): AttachResult {
    return {
      connectionId: this.id,
      info: this.info,
      health: this.health,
    };
  }

  adopt(): void {
    this.adopted = true;
  }

  // ---- requests -----------------------------------------------------------------------------

  async submit(peer: ThreadPeer, body: SubmitBody): Promise<{ engineIndex: number }> {
    this.assertAttached(peer);
    const { requestId } = body;
    if (this.requests.has(requestId)) throw new DuplicateRequestIdError({ requestId });
    const engine = this.selectEngine(body.dataParallelRank);
    const tracked: TrackedRequest = { requestId, owner: peer, slot: body.slot, engine };
    this.requests.set(requestId, tracked);
    this.ended.delete(requestId);
    engine.inflight++;
    try {
      let frames = body.frames;
      const coordinator = this.io.coordinator;
      if (coordinator !== null) {
        // Encoded once on the submitting thread; the wave known now is stamped into the bytes.
        frames = withCurrentWave(frames, coordinator.state().currentWave);
        await coordinator.notifyRequest(engine.index);
      }
      await this.io.send(engine.index, frames);
    } catch (error) {
      // Roll the registration back unless the request already ended (engine death, abort, shutdown).
      if (this.requests.get(requestId) === tracked) this.forget(requestId, tracked, "aborted");
      throw error;
    }
    return { engineIndex: engine.index };
  }

  /** Explicit rank → that engine; otherwise the least loaded live engine (engine-load.ts). */
  private selectEngine(rank: number | null): EngineState {
    if (rank !== null) {
      const engine = this.byIndex.get(rank);
      if (engine === undefined) {
        throw new InvalidDataParallelRankError({ rank, engineIndices: this.engines.map((e) => e.index) });
      }
      if (engine.dead !== undefined) throw engine.dead;
      return engine;
    }
    // With an external coordinator, Python's published-counts choice (on zeros until the first publish).
    const coordinator = this.io.coordinator;
    const best =
      (coordinator?.mode === "external"
        ? this.published.pick(this.engines, coordinator.state().counts)
        : undefined) ?? leastLoaded(this.engines);
    if (best === undefined) {
      throw (
        this.engines[0]?.dead ??
        new EngineDeadError({ engineIndex: null, reason: "the connection has no live engine" })
      );
    }
    return best;
  }

  async abort(peer: ThreadPeer, requestIds: readonly string[]): Promise<AbortResult> {
    this.assertAttached(peer);
    const live: [string, number][] = [];
    const othersByPeer = new Map<ThreadPeer, [string, number][]>();
    const byEngine = new Map<EngineState, string[]>();
    for (const requestId of requestIds) {
      const tracked = this.requests.get(requestId);
      if (tracked === undefined) continue;
      this.forget(requestId, tracked, "aborted");
      const entry: [string, number] = [requestId, tracked.engine.index];
      live.push(entry);
      if (tracked.owner !== peer) pushTo(othersByPeer, tracked.owner, entry);
      pushTo(byEngine, tracked.engine, requestId);
    }
    // Sinks on other threads end the way the caller's own do: with `aborted`.
    for (const [owner, entries] of othersByPeer) owner.post({ t: "aborted", c: this.id, live: entries });
    await this.sendAborts(byEngine);
    return { live };
  }

  async callUtility(
    peer: ThreadPeer,
    method: string,
    packedArgs: unknown[],
    bounds: UtilityBounds = {},
  ): Promise<{ engineIndex: number; output: UtilityOutput }[]> {
    this.assertAttached(peer);
    const dead = this.engines.find((engine) => engine.dead !== undefined);
    if (dead?.dead !== undefined) throw dead.dead;
    const args = unpackArgs(packedArgs) as unknown[];
    // Phase 1: one call id per engine, registered before anything is sent.
    const calls: {
      engine: EngineState;
      callId: bigint;
      result: Promise<UtilityOutput>;
      frames: Uint8Array[];
    }[] = [];
    try {
      for (const engine of this.engines) {
        const callId = this.nextCallId++;
        const result = new Promise<UtilityOutput>((resolve, reject) => {
          this.utilities.set(callId, { engine, resolve, reject });
        });
        // Rejections are observed in phase 3, or never when the call is rolled back.
        result.catch(() => {});
        const call = { engine, callId, result, frames: [] as Uint8Array[] };
        calls.push(call);
        call.frames = encodeUtilityCall({ clientIndex: this.clientIndex, callId, method, args });
      }
    } catch (error) {
      // An argument could not be encoded: nothing was sent.
      for (const call of calls) this.utilities.delete(call.callId);
      throw error;
    }
    const answered = async () => {
      // Phase 2: send to every engine.
      try {
        await Promise.all(calls.map((call) => this.io.send(call.engine.index, call.frames)));
      } catch (error) {
        // Roll back: replies to calls that did reach an engine are dropped.
        for (const call of calls) this.utilities.delete(call.callId);
        throw error;
      }
      // Phase 3: every engine's answer, in engine order.
      return Promise.all(calls.map((call) => call.result));
    };
    const outputs = await this.bounded(answered(), method, calls, bounds);
    // Results may hold Float64/MsgpackExt, which structured clone would flatten.
    return calls.map((call, i) => ({
      engineIndex: call.engine.index,
      output: packArgs(outputs[i]!) as UtilityOutput,
    }));
  }

  /**
   * `work`, unless the caller's timeout fires or its signal aborts first: then the calls still pending are
   * forgotten (their call ids remembered, so a reply that still comes is counted as late) and the call
   * rejects with UtilityTimeoutError naming the engines that had not answered, or the signal's reason.
   */
  private bounded<T>(
    work: Promise<T>,
    method: string,
    calls: readonly { engine: EngineState; callId: bigint }[],
    bounds: UtilityBounds,
  ): Promise<T> {
    const { timeoutMs, signal } = bounds;
    if ((timeoutMs === undefined || timeoutMs === null) && signal === undefined) return work;
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settled = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const giveUp = (error: unknown) => {
        settled();
        for (const call of calls) {
          if (this.utilities.delete(call.callId)) this.cancelledCalls.add(call.callId, call.engine.index);
        }
        work.catch(() => {});
        reject(error);
      };
      const onAbort = () => giveUp(signal!.reason);
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs !== null) {
        timer = setTimeout(() => {
          const silent = calls.filter((call) => this.utilities.has(call.callId)).map((c) => c.engine.index);
          giveUp(new UtilityTimeoutError({ method, engineIndices: silent, timeoutMs }));
        }, timeoutMs);
      }
      work.then(
        (value) => {
          settled();
          resolve(value);
        },
        (error: unknown) => {
          settled();
          reject(error);
        },
      );
    });
  }

  diagnostics(peer: ThreadPeer): ConnectionDiagnosticsWire {
    this.assertAttached(peer);
    return this.diag.snapshot();
  }

  // ---- thread lifecycle ---------------------------------------------------------------------

  /** The thread stops using this connection: its live requests are aborted on their engines. */
  async detach(peer: ThreadPeer): Promise<void> {
    if (!this.peers.has(peer)) return;
    this.peers.delete(peer);
    peer.connections.delete(this);
    await this.abortOwnedBy(peer);
  }

  /** The thread died. A connection nobody adopted dies with its opener (nobody else can hold it). */
  async peerGone(peer: ThreadPeer): Promise<void> {
    await this.detach(peer);
    if (!this.adopted && peer === this.opener) {
      await this.shutdown(new ClientClosedError({ detail: "the thread that opened the connection exited" }));
    }
  }

  /** Closes the connection for every thread and closes its sockets. */
  /** Idempotent: a second call (another thread's, or the same one's) waits until the sockets are closed. */
  shutdown(error: Error = new ClientClosedError({ detail: "the connection was shut down" })): Promise<void> {
    this.shuttingDown ??= this.closeAll(error);
    return this.shuttingDown;
  }

  private async closeAll(error: Error): Promise<void> {
    if (this.closed) return; // closeSockets() came first (process exit)
    this.closed = true;
    this.diag.close();
    const serialized = serializeError(error);
    for (const peer of this.peers) {
      peer.post({ t: "closed", c: this.id, error: serialized });
      peer.connections.delete(this);
    }
    this.peers.clear();
    // Best effort: tell the engines to stop working for nobody before the sockets go.
    const byEngine = new Map<EngineState, string[]>();
    for (const [requestId, tracked] of this.requests) pushTo(byEngine, tracked.engine, requestId);
    this.requests.clear();
    for (const pending of this.utilities.values()) pending.reject(error);
    this.utilities.clear();
    await this.sendAborts(byEngine).catch(() => {});
    try {
      await this.io.close();
    } finally {
      this.onClosed(this);
    }
  }

  /** Process exit or runtime crash: close the sockets, tell nobody (the host reports the runtime's fate). */
  async closeSockets(): Promise<void> {
    this.closed = true;
    this.diag.close();
    for (const pending of this.utilities.values()) pending.reject(new ClientClosedError());
    this.utilities.clear();
    this.requests.clear();
    await this.io.close();
  }

  // ---- engine events (OutputSink) -----------------------------------------------------------

  /**
   * One output message, undecoded (`route` is its routing read, see the transport's OutputSink). A step's
   * request outputs are routed by the request ids alone and forwarded as raw frames to the thread(s) that
   * own them, which decode them — once, where they are consumed. Anything else (a utility reply, a wave
   * notice, stats alone, a mixed shape, or outputs no live request owns) is consumed here, so it is decoded
   * here.
   */
  onOutputs(route: OutputRoute, frames: Buffer[], senders: readonly number[]): void {
    if (this.closed) return;
    // Scheduler stats: the one place a message's `hasSchedulerStats` is looked at. A stats-only message is
    // decoded here anyway (consumeHere hands its stats on); stats riding on a step's outputs are read alone
    // (once per engine step) and the frames still go to their owners undecoded.
    const statsOnly = route.hasSchedulerStats && route.outputCount === 0 && route.finishedRequests === null;
    const stepOutputs = route.outputCount > 0 || route.finishedRequests !== null;
    if (statsOnly || !stepOutputs || route.hasUtilityOutput || route.hasWaveComplete || route.hasStartWave) {
      this.consumeHere(frames, senders);
      return;
    }
    if (route.hasSchedulerStats) this.readStepStats(route, frames[0]!);
    this.routeStepOutputs(route, frames, senders);
  }

  /**
   * Routes a step's request outputs by id: the registry forgets the requests the step finishes (an output
   * with a finish reason, or `finished_requests`), and the frames go to each thread that owns one of them.
   */
  private routeStepOutputs(route: OutputRoute, frames: Buffer[], senders: readonly number[]): void {
    const { outputCount: n, outputFinished, requestIdKeys: keys } = route;
    const main = frames[0]!;
    // Per owner thread, its slot of each output's request (-1: not its own): the owner then finds its
    // requests by index, without hashing the ids it decodes. One owner is the common case.
    let owner: ThreadPeer | undefined;
    let slots: Int32Array | undefined;
    let others: Map<ThreadPeer, Int32Array> | undefined;
    let strays: number[] | undefined;
    const slotsOf = (peer: ThreadPeer): Int32Array => {
      if (owner === undefined) {
        owner = peer;
        slots = new Int32Array(n).fill(-1);
      }
      if (peer === owner) return slots!;
      others ??= new Map();
      let theirs = others.get(peer);
      if (theirs === undefined) {
        theirs = new Int32Array(n).fill(-1);
        others.set(peer, theirs);
      }
      return theirs;
    };
    for (let i = 0; i < n; i++) {
      // Looked up by the id's bytes in the frame: no id string is built on this thread.
      const tracked = this.requests.getByKey(main, keys[3 * i]!, keys[3 * i + 1]!, keys[3 * i + 2]!);
      if (tracked === undefined) {
        if (strays === undefined) strays = [i];
        else strays.push(i);
        continue;
      }
      if (outputFinished[i]) this.forget(tracked.requestId, tracked, "finished");
      slotsOf(tracked.owner)[i] = tracked.slot;
    }
    const finished = route.finishedRequests;
    if (finished !== null) {
      for (const requestId of finished) {
        const tracked = this.requests.get(requestId);
        // Not counted: with include_finished_set vLLM also lists requests whose finish output came already.
        if (tracked === undefined) continue;
        this.forget(requestId, tracked, "finished");
        slotsOf(tracked.owner); // the owner needs the message: it ends the request by its id
      }
    }
    if (owner === undefined) {
      // Nothing in it belongs to a live request: it ends here, so it is decoded here (an undecodable one
      // still counts as such, and the strays are counted from the decoded outputs).
      this.consumeHere(frames, senders);
      return;
    }
    if (strays !== undefined) {
      const engineIndex = route.engineIndex ?? senders[0] ?? -1;
      for (const i of strays) {
        const requestId = route.requestIds[i]!;
        this.diag.outputForInactiveRequest(requestId, this.ended.get(requestId), engineIndex);
      }
    }
    // Raw frames, decoded by each owner thread (which skips the outputs that are not its own); cheaper than
    // cloning decoded objects (measured; see README). `seq` names the message if an owner cannot decode it.
    // Each owner's peer copies them (into its frame ring, or into own buffers for the link).
    const seq = ++this.forwarded;
    owner.post({ t: "frames", c: this.id, seq, senders, frames, slots: slots! });
    if (others !== undefined) {
      for (const [peer, theirs] of others) {
        peer.post({ t: "frames", c: this.id, seq, senders, frames, slots: theirs });
      }
    }
  }

  /** Decodes and consumes a message that no other thread receives. */
  private consumeHere(frames: Buffer[], senders: readonly number[]): void {
    let message: OutputMessage;
    try {
      message = decodeOutputMessage(frames);
    } catch (error) {
      this.onBadMessage(asProtocolError(error), frames, senders);
      return;
    }
    if (message.kind !== "outputs") return; // the transport handles the sentinel
    const outputs = message.outputs;
    if (outputs.utilityOutput !== null) this.resolveUtility(outputs.engineIndex, outputs.utilityOutput);
    if (outputs.schedulerStats !== null) this.onSchedulerStats(outputs.engineIndex, outputs.schedulerStats);
    for (const output of outputs.outputs) {
      if (this.requests.has(output.requestId)) continue; // cannot happen: such a message is routed
      this.diag.outputForInactiveRequest(
        output.requestId,
        this.ended.get(output.requestId),
        outputs.engineIndex,
      );
    }
  }

  /**
   * An owner thread could not decode a forwarded message (`seq`): judge it as any undecodable message, once
   * however many threads report it, and fail the reporter's requests it named (`live`: the ones still live
   * on that thread; those the message finished were already forgotten here).
   */
  onForwardedUndecodable(
    peer: ThreadPeer,
    report: {
      seq: number;
      senders: readonly number[];
      frames: Uint8Array[];
      error: ProtocolError;
      live: string[];
    },
  ): void {
    if (this.closed) return;
    const forgotten = report.live.filter((requestId) => !this.requests.has(requestId));
    let failedWith = this.judgedForwards.get(report.seq);
    if (failedWith === undefined) {
      failedWith = this.judgeBadMessage(report.error, report.frames, report.senders);
      this.judgedForwards.add(report.seq, failedWith);
    }
    if (report.live.length === 0) return;
    peer.post({ t: "fail", c: this.id, requestIds: report.live, error: serializeError(failedWith) });
    this.diag.failedByProtocolError({ requests: forgotten.length });
  }

  onEngineDead(engineIndex: number | null, reason: string): void {
    if (this.closed) return;
    // null: the transport lost every engine at once (the DP coordinator is gone).
    const engines =
      engineIndex === null ? this.engines : [this.byIndex.get(engineIndex)].filter((e) => e !== undefined);
    for (const engine of engines) {
      if (engine.dead !== undefined) continue;
      this.markDead(
        engine,
        new EngineDeadError({ engineIndex: engineIndex === null ? null : engine.index, reason }),
      );
    }
  }

  /**
   * An output message that could not be decoded: fail what it concerns — its streams, its utility call, or
   * its engine (see output-faults.ts for the rule).
   */
  onBadMessage(error: ProtocolError, frames: readonly Uint8Array[], senders: readonly number[]): void {
    if (this.closed) return;
    this.judgeBadMessage(error, frames, senders);
  }

  /** onBadMessage; returns the error the requests the message names fail with. */
  private judgeBadMessage(
    error: ProtocolError,
    frames: readonly Uint8Array[],
    senders: readonly number[],
  ): Error {
    const live = senders.filter((index) => this.byIndex.get(index)?.dead === undefined);
    const verdict = this.faults.judge(error, frames, live);
    this.diag.badMessage(verdict.kind === "engines" ? (verdict.errors[0] ?? error) : verdict.error);
    if (verdict.kind === "requests") {
      this.failRequests(this.byIndex.get(verdict.engineIndex)!, verdict.requestIds, verdict.error);
      return verdict.error;
    }
    if (verdict.kind === "utility") {
      const pending = this.utilities.get(verdict.callId);
      if (pending === undefined || pending.engine.index !== verdict.engineIndex) {
        this.diag.unknownUtilityReply(verdict.engineIndex, verdict.callId);
        return verdict.error;
      }
      this.utilities.delete(verdict.callId);
      pending.reject(verdict.error);
      this.diag.failedByProtocolError({ utilityCalls: 1 });
      return verdict.error;
    }
    for (const engineError of verdict.errors) {
      const engine = this.byIndex.get(engineError.engineIndex!)!;
      const { requestIds, utilityCalls } = this.markDead(engine, engineError);
      this.diag.failedByProtocolError({ requests: requestIds.length, utilityCalls, engines: 1 });
      // The engine process may still be generating them: tell it to stop (best effort).
      if (requestIds.length > 0)
        void this.io.send(engine.index, encodeAbortRequest(requestIds)).catch(() => {});
    }
    // No live sender left: the engine was already dead, and its error is what its requests fail with.
    return verdict.errors[0] ?? senders.map((index) => this.byIndex.get(index)?.dead).find((e) => e) ?? error;
  }

  // ---- internals ----------------------------------------------------------------------------

  private attachPeer(peer: ThreadPeer): void {
    this.peers.add(peer);
    peer.connections.add(this);
  }

  /** Marks the engine dead: health, its live requests and pending utility calls fail with `error`. */
  private markDead(
    engine: EngineState,
    error: EngineDeadError | ProtocolError,
  ): { requestIds: string[]; utilityCalls: number } {
    engine.dead = error;
    this.setHealth(error);
    const serialized = serializeError(error);
    const byPeer = new Map<ThreadPeer, string[]>();
    const requestIds: string[] = [];
    for (const [requestId, tracked] of this.requests) {
      if (tracked.engine !== engine) continue;
      this.forget(requestId, tracked, "aborted");
      pushTo(byPeer, tracked.owner, requestId);
      requestIds.push(requestId);
    }
    for (const [peer, ids] of byPeer)
      peer.post({ t: "fail", c: this.id, requestIds: ids, error: serialized });
    let utilityCalls = 0;
    for (const [callId, pending] of this.utilities) {
      if (pending.engine !== engine) continue;
      this.utilities.delete(callId);
      pending.reject(error);
      utilityCalls++;
    }
    return { requestIds, utilityCalls };
  }

  /** Fails the live requests of `engine` among `requestIds` (an undecodable message named them) and aborts them there. */
  private failRequests(engine: EngineState, requestIds: readonly string[], error: ProtocolError): void {
    const serialized = serializeError(error);
    const byPeer = new Map<ThreadPeer, string[]>();
    const failed: string[] = [];
    for (const requestId of requestIds) {
      const tracked = this.requests.get(requestId);
      // Another engine's request: this engine's message cannot carry its output.
      if (tracked === undefined || tracked.engine !== engine) continue;
      this.forget(requestId, tracked, "aborted");
      pushTo(byPeer, tracked.owner, requestId);
      failed.push(requestId);
    }
    for (const [peer, ids] of byPeer)
      peer.post({ t: "fail", c: this.id, requestIds: ids, error: serialized });
    this.diag.failedByProtocolError({ requests: failed.length });
    if (failed.length > 0) void this.sendAborts(new Map([[engine, failed]])).catch(() => {});
  }

  /**
   * The stats of a routed step, decoded alone from where the routing read found them. A bad stats field
   * is left to the owner threads, whose full decode reports the message back to be judged like any
   * undecodable one.
   */
  private readStepStats(route: OutputRoute, main: Buffer): void {
    let stats: SchedulerStats | null;
    try {
      stats = readSchedulerStats(main, route);
    } catch {
      return;
    }
    if (stats !== null) this.onSchedulerStats(route.engineIndex ?? 0, stats);
  }

  /** Routing load and the per-engine stats every thread of the connection sees (issue 12). */
  private onSchedulerStats(engineIndex: number, stats: SchedulerStats): void {
    const engine = this.byIndex.get(engineIndex);
    if (engine === undefined) return;
    recordReportedLoad(engine, stats);
    relaySchedulerStats(this.peers, this.id, engineIndex, stats);
  }

  private resolveUtility(engineIndex: number, output: UtilityOutput): void {
    const pending = this.utilities.get(output.callId);
    if (pending === undefined && this.cancelledCalls.get(output.callId) === engineIndex) {
      // Its caller gave up (timeout or abort): expected, dropped.
      this.cancelledCalls.delete(output.callId);
      this.diag.lateUtilityReply();
      return;
    }
    if (pending === undefined || pending.engine.index !== engineIndex) {
      this.diag.unknownUtilityReply(engineIndex, output.callId);
      return;
    }
    this.utilities.delete(output.callId);
    pending.resolve(output);
  }

  private forget(requestId: string, tracked: TrackedRequest, how: EndedHow): void {
    this.requests.delete(requestId);
    tracked.engine.inflight--;
    this.ended.add(requestId, how);
  }

  private async abortOwnedBy(peer: ThreadPeer): Promise<void> {
    const byEngine = new Map<EngineState, string[]>();
    for (const [requestId, tracked] of this.requests) {
      if (tracked.owner !== peer) continue;
      this.forget(requestId, tracked, "aborted");
      pushTo(byEngine, tracked.engine, requestId);
    }
    await this.sendAborts(byEngine);
  }

  /**
   * One ABORT per engine; a dead engine gets none, and neither does one whose connection is found gone by
   * the send (EngineDeadError: it vanished, its death is reported after the vanish grace): there is nothing
   * left to stop there. Any other send failure is rethrown (the first) after all were tried.
   */
  private async sendAborts(byEngine: Map<EngineState, string[]>): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const [engine, requestIds] of byEngine) {
      if (engine.dead === undefined) sends.push(this.io.send(engine.index, encodeAbortRequest(requestIds)));
    }
    const results = await Promise.allSettled(sends);
    const failed = results.find(
      (r): r is PromiseRejectedResult => r.status === "rejected" && !(r.reason instanceof EngineDeadError),
    );
    if (failed !== undefined) throw failed.reason;
  }

  private setHealth(error: Error): void {
    if (this.health !== null) return;
    this.health = serializeError(error);
    for (const peer of this.peers) peer.post({ t: "health", c: this.id, error: this.health });
  }

  private assertOpen(): void {
    if (this.closed) throw new ClientClosedError({ detail: "the connection was shut down" });
  }

  private assertAttached(peer: ThreadPeer): void {
    this.assertOpen();
    if (!this.peers.has(peer))
      throw new ClientClosedError({ detail: "this thread is not attached to the connection" });
  }
}

function asProtocolError(error: unknown): ProtocolError {
  return error instanceof ProtocolError
    ? error
    : new ProtocolError({ struct: "EngineCoreOutputs", detail: String((error as Error)?.message ?? error) });
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}
