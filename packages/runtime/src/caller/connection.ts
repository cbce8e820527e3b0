// This thread's view of one connection: a dense slot table of its streams' sinks (the runtime owns each
// request and names this thread's by their slot), the connection's health, and the calls on its lane.
import {
  ClientClosedError,
  deserializeError,
  RequestStreamClosedError,
  RuntimeCrashedError,
  serializeError,
} from "@vllm-engine-core/errors";
import {
  decodeOutputMessageKnowing,
  type EngineCoreOutputs,
  type EngineCoreRequest,
  encodeAddRequest,
  type OutputMessage,
  ProtocolError,
  type UtilityOutput,
} from "@vllm-engine-core/protocol";
import { ownedFrame, packArgs, unpackUtilityOutput } from "../cloneable.js";
import type { AttachResult, RequestRef } from "../messages.js";
import type {
  ConnectionDiagnostics,
  ConnectionHandle,
  ConnectionInfo,
  RequestSink,
  RuntimeConnection,
  UtilityCallOptions,
} from "../types.js";
import type { Lane, LaneEvent, LaneOwner } from "./lane.js";
import { type SchedulerStatsListener, SchedulerStatsListeners } from "./stats-listeners.js";
import { untilAborted } from "./until-aborted.js";

interface Stream {
  readonly requestId: string;
  readonly slot: number;
  readonly sink: RequestSink;
  /** Who submitted it on this thread (RuntimeConnection.release ends what one owner submitted). */
  readonly owner: object | undefined;
  /** -1 until the runtime confirmed the submit. */
  engineIndex: number;
  readonly release: () => void;
  /**
   * An output message naming it could not be decoded here: nothing more is delivered to it until the
   * runtime's verdict fails it (reported back, see ToRuntime "undecodable").
   */
  failing: boolean;
}

type FramesEvent = Extract<LaneEvent, { t: "frames" }>;

export class ThreadConnection implements RuntimeConnection, LaneOwner {
  readonly info: ConnectionInfo;
  readonly handle: ConnectionHandle;
  readonly #lane: Lane;
  /** This thread's live streams by slot; freed slots are reused (#freeSlots). */
  readonly #slots: (Stream | undefined)[] = [];
  readonly #freeSlots: number[] = [];
  /** Who retained the connection on this thread (see RuntimeConnection.retain). */
  readonly #owners = new Set<object>();
  readonly #healthListeners = new Set<(error: Error) => void>();
  readonly #statsListeners = new SchedulerStatsListeners();
  readonly #onGone: () => void;
  #health: Error | undefined;
  #closed: Error | undefined;
  #shuttingDown: Promise<void> | undefined;

  constructor(lane: Lane, attached: AttachResult, onGone: () => void) {
    this.#lane = lane;
    this.#onGone = onGone;
    this.info = attached.info;
    this.handle = Object.freeze({ connectionId: attached.connectionId, __vllmConnectionHandle: 1 as const });
    if (attached.health !== null) this.#health = deserializeError(attached.health);
    lane.setOwner(this);
    lane.whenClosedSilently(
      () => new RuntimeCrashedError({ reason: "the runtime thread ended without closing the connection" }),
    );
  }

  get healthError(): Error | undefined {
    return this.#health;
  }

  get closed(): boolean {
    return this.#closed !== undefined;
  }

  onHealthChange(listener: (error: Error) => void): () => void {
    this.#healthListeners.add(listener);
    return () => this.#healthListeners.delete(listener);
  }

  onSchedulerStats(listener: SchedulerStatsListener): () => void {
    return this.#statsListeners.add(listener);
  }

  async submit(
    request: EngineCoreRequest,
    sink: RequestSink,
    options: { owner?: object } = {},
  ): Promise<{ engineIndex: number }> {
    this.#assertOpen();
    const { requestId } = request;
    // Encoded once, here: it validates the request on the caller's thread and keeps the runtime thread
    // free (with a DP coordinator the runtime only stamps the current wave into these bytes).
    const frames = encodeAddRequest(request).map(ownedFrame);
    const slot = this.#freeSlots.pop() ?? this.#slots.length;
    const stream: Stream = {
      requestId,
      slot,
      sink,
      owner: options.owner,
      engineIndex: -1,
      release: this.#lane.hold(),
      failing: false,
    };
    this.#slots[slot] = stream;
    try {
      // The runtime checks the id (DuplicateRequestIdError), picks the engine and sends the ADD.
      const reply = await this.#lane.call({
        t: "submit",
        requestId,
        slot,
        dataParallelRank: request.dataParallelRank ?? null,
        frames,
      }).result;
      stream.engineIndex = reply.engineIndex;
      return { engineIndex: reply.engineIndex };
    } catch (error) {
      this.#end(stream);
      throw error;
    }
  }

  async abort(requestIds: readonly string[]): Promise<string[]> {
    this.#assertOpen();
    // This thread's sinks end at once; outputs already on their way are dropped.
    const ids = new Set(requestIds);
    for (const stream of this.#streams()) {
      if (ids.has(stream.requestId) && this.#end(stream))
        safely(() => stream.sink.aborted(stream.engineIndex));
    }
    const result = await this.#lane.call({ t: "abort", requestIds: [...requestIds] }).result;
    return result.live.map(([requestId]) => requestId);
  }

  retain(owner: object): void {
    this.#assertOpen();
    this.#owners.add(owner);
  }

  async release(owner: object, error: Error): Promise<void> {
    const owned: string[] = [];
    for (const stream of this.#streams()) {
      if (stream.owner !== owner || !this.#end(stream)) continue;
      owned.push(stream.requestId);
      safely(() => stream.sink.fail(error));
    }
    // The last owner that retained the connection here: the thread is done with it (detach aborts what is
    // left of this thread's requests on the runtime).
    if (this.#owners.delete(owner) && this.#owners.size === 0) {
      await this.detach();
      return;
    }
    if (owned.length === 0 || this.#closed !== undefined) return;
    try {
      await this.#lane.call({ t: "abort", requestIds: owned }).result;
    } catch {
      // The connection or the runtime is gone: nothing left to abort.
    }
  }

  async callUtility(
    method: string,
    args: readonly unknown[],
    options: UtilityCallOptions = {},
  ): Promise<{ engineIndex: number; output: UtilityOutput }[]> {
    this.#assertOpen();
    const { signal, timeoutMs } = options;
    signal?.throwIfAborted();
    // The runtime owns the pending call: it runs the timeout (it knows which engines have not answered)
    // and, on a cancel, forgets the call so that a late reply is recognised as such.
    const { id, result } = this.#lane.call({
      t: "utility",
      method,
      args: [...args].map(packArgs),
      timeoutMs: timeoutMs ?? null,
    });
    const replies = await (signal === undefined
      ? result
      : untilAborted(result, signal, () => this.#lane.post({ t: "cancel", id })));
    return replies.map(({ engineIndex, output }) => ({ engineIndex, output: unpackUtilityOutput(output) }));
  }

  async diagnostics(): Promise<ConnectionDiagnostics> {
    this.#assertOpen();
    const { lastProtocolError, ...counters } = await this.#lane.call({ t: "diagnostics" }).result;
    const error = lastProtocolError === null ? null : deserializeError(lastProtocolError);
    return { ...counters, lastProtocolError: error instanceof ProtocolError ? error : null };
  }

  async detach(): Promise<void> {
    if (this.#closed !== undefined) return;
    const error = new ClientClosedError({ detail: "this thread detached from the connection" });
    this.#close(error, false);
    try {
      // Confirmed: this thread's requests are aborted on their engines by then.
      await this.#lane.call({ t: "detach" }).result;
    } catch {
      // The runtime or the connection is already gone: nothing left to detach from.
    }
    this.#lane.close(error);
  }

  /** Idempotent: every call resolves once the runtime closed the sockets (or the connection was closed). */
  shutdown(): Promise<void> {
    this.#shuttingDown ??= this.#shutdown();
    return this.#shuttingDown;
  }

  async #shutdown(): Promise<void> {
    if (this.#closed !== undefined) return;
    try {
      await this.#lane.call({ t: "shutdown" }).result;
    } catch (error) {
      // Already closed by another thread or the runtime is gone: the connection is closed either way.
      this.#close(asError(error), true);
      return;
    }
    // The runtime's "closed" event came before the reply; this is the fallback if it did not.
    this.#close(new ClientClosedError({ detail: "the connection was shut down" }), true);
  }

  // ---- lane events --------------------------------------------------------------------------

  onEvent(event: LaneEvent): void {
    switch (event.t) {
      case "frames":
        this.#onFrames(event);
        return;
      case "stats":
        this.#statsListeners.emitPacked(event.engineIndex, event.stats);
        return;
      case "ended": {
        const error = event.error === null ? undefined : deserializeError(event.error);
        for (const [requestId, slot, engineIndex] of event.requests) {
          const stream = this.#slots[slot];
          if (stream === undefined || stream.requestId !== requestId || !this.#end(stream)) continue;
          if (error === undefined) safely(() => stream.sink.aborted(engineIndex));
          else safely(() => stream.sink.fail(error));
        }
        return;
      }
      case "health":
        this.#setHealth(deserializeError(event.error));
        return;
      case "closed":
        this.#close(deserializeError(event.error), true);
        this.#lane.closeWhenIdle(this.#closed!);
        return;
    }
  }

  onEnded(error: Error): void {
    this.#close(error, true);
  }

  // ---- internals ----------------------------------------------------------------------------

  /**
   * The one full decode of an engine step's outputs (the runtime only read the request ids). The runtime's
   * slots say which of this thread's streams each output names: their ids are compared, not rebuilt.
   */
  #onFrames(event: FramesEvent): void {
    let decoded: OutputMessage;
    try {
      decoded = decodeOutputMessageKnowing(event.frames, event.slots, this.#slots);
    } catch (error) {
      this.#undecodable(event, error);
      return;
    }
    if (decoded.kind !== "outputs") return;
    const { engineIndex, schedulerStats } = decoded.outputs;
    // The step's stats come in its frames (the runtime sends them alone only to threads that get none),
    // and before its outputs, as vLLM's output handler records them.
    if (schedulerStats !== null) this.#statsListeners.emitDecoded(engineIndex, schedulerStats);
    this.#deliver(decoded.outputs, event.slots);
  }

  #deliver(step: EngineCoreOutputs, slots: Int32Array): void {
    const { engineIndex, timestamp, outputs, finishedRequests: finished } = step;
    // Hot path (one call per engine step with up to thousands of outputs): each output goes straight to
    // its sink, in order. The id comparison (the same string object when the decode matched it) guards a
    // slot that was freed and reused since the runtime routed the message.
    const n = outputs.length;
    for (let i = 0; i < n; i++) {
      const output = outputs[i]!;
      const slot = i < slots.length ? slots[i]! : -1;
      if (slot < 0) continue;
      const stream = this.#slots[slot];
      if (stream === undefined || stream.requestId !== output.requestId || stream.failing) continue;
      if (output.finishReason !== null) this.#end(stream);
      try {
        stream.sink.output(output, engineIndex, timestamp);
      } catch (error) {
        rethrowLater(error);
      }
    }
    // Finished on the engine without a final output (e.g. aborted by the engine): the stream closed. Their
    // slots follow the outputs' (see ToThread "frames").
    if (finished === null) return;
    for (let j = 0; j < finished.length; j++) {
      const slot = n + j < slots.length ? slots[n + j]! : -1;
      const stream = slot < 0 ? undefined : this.#slots[slot];
      if (stream === undefined || stream.requestId !== finished[j] || stream.failing) continue;
      if (this.#end(stream)) {
        safely(() => stream.sink.fail(new RequestStreamClosedError({ requestId: stream.requestId })));
      }
    }
  }

  /**
   * Forwarded frames that do not decode: this thread's streams they name get nothing more, and the runtime
   * (which owns the fault rule, runtime-thread/output-faults.ts) judges the message and ends them.
   */
  #undecodable(event: FramesEvent, error: unknown): void {
    const live: RequestRef[] = [];
    for (const slot of event.slots) {
      const stream = slot < 0 ? undefined : this.#slots[slot];
      if (stream === undefined || stream.failing) continue;
      stream.failing = true;
      live.push([stream.requestId, slot, stream.engineIndex]);
    }
    const protocolError =
      error instanceof ProtocolError
        ? error
        : new ProtocolError({ struct: "EngineCoreOutputs", detail: asError(error).message });
    this.#lane.post({
      t: "undecodable",
      seq: event.seq,
      senders: [...event.senders],
      frames: event.frames,
      error: serializeError(protocolError),
      live,
    });
  }

  /** Every live stream (a copy: ending one while iterating is fine). */
  #streams(): Stream[] {
    return this.#slots.filter((stream): stream is Stream => stream !== undefined);
  }

  /** Ends `stream` here (false when it already ended): its slot is free again. */
  #end(stream: Stream): boolean {
    if (this.#slots[stream.slot] !== stream) return false;
    this.#slots[stream.slot] = undefined;
    this.#freeSlots.push(stream.slot);
    stream.release();
    return true;
  }

  #setHealth(error: Error): void {
    if (this.#health !== undefined) return;
    this.#health = error;
    for (const listener of [...this.#healthListeners]) safely(() => listener(error));
  }

  #close(error: Error, isHealthEvent: boolean): void {
    if (this.#closed !== undefined) return;
    this.#closed = error;
    if (isHealthEvent) this.#setHealth(error);
    for (const stream of this.#streams()) {
      if (this.#end(stream)) safely(() => stream.sink.fail(error));
    }
    this.#onGone();
  }

  #assertOpen(): void {
    if (this.#closed !== undefined) throw this.#closed;
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** A throwing sink or listener must not break delivery to the others; its error surfaces as uncaught. */
function safely(action: () => void): void {
  try {
    action();
  } catch (error) {
    rethrowLater(error);
  }
}

function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}
