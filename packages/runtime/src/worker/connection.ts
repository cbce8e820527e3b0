// One connection on the runtime thread: the request registry (request id → owner thread, engine), engine
// selection, utility calls, health, and the per-thread routing of engine outputs.
import type { ResolvedConfig } from "@vllm-engine-core/config";
import {
  ClientClosedError,
  DuplicateRequestIdError,
  type EngineCoreOutput,
  type EngineCoreOutputs,
  type EngineCoreRequest,
  EngineDeadError,
  encodeAbortRequest,
  encodeAddRequest,
  encodeUtilityCall,
  InvalidDataParallelRankError,
  type ProtocolError,
  type SchedulerStats,
  type SerializedError,
  serializeError,
  type UtilityOutput,
  UtilityTimeoutError,
} from "@vllm-engine-core/protocol";
import {
  type AbortResult,
  type AttachResult,
  type CallBody,
  type ConnectionDiagnosticsWire,
  type ConnectionInfoWire,
  ownedFrame,
  packArgs,
  packOutput,
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
  readonly owner: ThreadPeer;
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
  private readonly requests = new Map<string, TrackedRequest>();
  private readonly utilities = new Map<bigint, PendingUtility>();
  private nextCallId = 1n;
  private readonly diag = new OutputDiagnostics();
  private readonly faults = new OutputFaultJudge();
  private readonly ended = new RecentlyEnded();
  private readonly cancelledCalls = new RecentlyEnded<bigint, number>(RECENTLY_CANCELLED_CALLS);
  private readonly published: PublishedCountsBalancer;
  private health: SerializedError | null = null;
  private adopted = false;
  private closed = false;

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
      encodeOnRuntime: this.io.coordinator !== null,
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
    const tracked: TrackedRequest = { owner: peer, engine };
    this.requests.set(requestId, tracked);
    this.ended.delete(requestId);
    engine.inflight++;
    try {
      let frames = body.frames;
      const coordinator = this.io.coordinator;
      if (coordinator !== null) {
        const request = unpackArgs(body.request) as EngineCoreRequest;
        frames = encodeAddRequest({ ...request, currentWave: coordinator.state().currentWave });
        await coordinator.notifyRequest(engine.index);
      }
      if (frames === null) throw new TypeError("submit carried neither frames nor a request");
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
    const counts = this.io.coordinator?.state().counts;
    const best =
      (counts ? this.published.pick(this.engines, counts) : undefined) ?? leastLoaded(this.engines);
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
    // Streams owned by other threads end the way the caller's own do: with a final ABORT output.
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
  async shutdown(
    error: Error = new ClientClosedError({ detail: "the connection was shut down" }),
  ): Promise<void> {
    if (this.closed) return;
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

  onOutputs(outputs: EngineCoreOutputs, frames: Buffer[]): void {
    if (this.closed) return;
    if (outputs.utilityOutput !== null) this.resolveUtility(outputs.engineIndex, outputs.utilityOutput);
    if (outputs.schedulerStats !== null) this.onSchedulerStats(outputs.engineIndex, outputs.schedulerStats);
    const finished = outputs.finishedRequests;
    if (outputs.outputs.length === 0 && finished === null) return;
    // Split the step by owner thread; the registry forgets requests that finished in this step.
    const perPeer = new Map<ThreadPeer, { outputs: EngineCoreOutput[]; finished: string[] | null }>();
    const slot = (peer: ThreadPeer) => {
      let entry = perPeer.get(peer);
      if (entry === undefined) {
        entry = { outputs: [], finished: null };
        perPeer.set(peer, entry);
      }
      return entry;
    };
    for (const output of outputs.outputs) {
      const tracked = this.requests.get(output.requestId);
      if (tracked === undefined) {
        this.diag.outputForInactiveRequest(
          output.requestId,
          this.ended.get(output.requestId),
          outputs.engineIndex,
        );
        continue;
      }
      if (output.finishReason !== null) this.forget(output.requestId, tracked, "finished");
      slot(tracked.owner).outputs.push(output);
    }
    if (finished !== null) {
      for (const requestId of finished) {
        const tracked = this.requests.get(requestId);
        // Not counted: with include_finished_set vLLM also lists requests whose finish output came already.
        if (tracked === undefined) continue;
        this.forget(requestId, tracked, "finished");
        const entry = slot(tracked.owner);
        if (entry.finished === null) entry.finished = [requestId];
        else entry.finished.push(requestId);
      }
    }
    if (perPeer.size === 1) {
      // Everything in this message concerns one thread: forward the raw frames and let it decode them,
      // which is cheaper than cloning the decoded objects (measured; see README).
      const [peer] = perPeer.keys();
      peer!.post({ t: "frames", c: this.id, frames: frames.map(ownedFrame) });
      return;
    }
    for (const [peer, entry] of perPeer) {
      peer.post({
        t: "outputs",
        c: this.id,
        engineIndex: outputs.engineIndex,
        timestamp: outputs.timestamp,
        outputs: entry.outputs.map(packOutput),
        finished: entry.finished,
      });
    }
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
  onBadMessage(error: ProtocolError, frames: Buffer[], senders: readonly number[]): void {
    if (this.closed) return;
    const live = senders.filter((index) => this.byIndex.get(index)?.dead === undefined);
    const verdict = this.faults.judge(error, frames, live);
    this.diag.badMessage(verdict.kind === "engines" ? (verdict.errors[0] ?? error) : verdict.error);
    if (verdict.kind === "requests") {
      this.failRequests(this.byIndex.get(verdict.engineIndex)!, verdict.requestIds, verdict.error);
    } else if (verdict.kind === "utility") {
      const pending = this.utilities.get(verdict.callId);
      if (pending === undefined || pending.engine.index !== verdict.engineIndex) {
        this.diag.unknownUtilityReply(verdict.engineIndex, verdict.callId);
        return;
      }
      this.utilities.delete(verdict.callId);
      pending.reject(verdict.error);
      this.diag.failedByProtocolError({ utilityCalls: 1 });
    } else {
      for (const engineError of verdict.errors) {
        const engine = this.byIndex.get(engineError.engineIndex!)!;
        const { requestIds, utilityCalls } = this.markDead(engine, engineError);
        this.diag.failedByProtocolError({ requests: requestIds.length, utilityCalls, engines: 1 });
        // The engine process may still be generating them: tell it to stop (best effort).
        if (requestIds.length > 0)
          void this.io.send(engine.index, encodeAbortRequest(requestIds)).catch(() => {});
      }
    }
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

  /** One ABORT per engine; a dead engine gets none. The first send failure is rethrown after all tried. */
  private async sendAborts(byEngine: Map<EngineState, string[]>): Promise<void> {
    const sends: Promise<void>[] = [];
    for (const [engine, requestIds] of byEngine) {
      if (engine.dead === undefined) sends.push(this.io.send(engine.index, encodeAbortRequest(requestIds)));
    }
    const results = await Promise.allSettled(sends);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
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

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}
