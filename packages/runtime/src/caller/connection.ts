// This thread's view of one connection: the sinks of the requests it submitted, the connection's health,
// and the calls it makes to the runtime. Output frames arrive on the link when they name at least one of
// this thread's requests, with each output's slot here (-1 for another thread's), and are decoded here.

import {
  ClientClosedError,
  DuplicateRequestIdError,
  deserializeError,
  RequestStreamClosedError,
  serializeError,
} from "@vllm-engine-core/errors";
import {
  decodeOutputMessageKnowing,
  type EngineCoreOutput,
  type EngineCoreRequest,
  encodeAddRequest,
  type OutputMessage,
  ProtocolError,
  readOutputRoute,
  type UtilityOutput,
} from "@vllm-engine-core/protocol";
import { type AttachResult, ownedFrame, packArgs, type ToHost, unpackUtilityOutput } from "../messages.js";
import type {
  ConnectionDiagnostics,
  ConnectionHandle,
  ConnectionInfo,
  RequestSink,
  RuntimeConnection,
  UtilityCallOptions,
} from "../types.js";
import type { LinkedConnection, RuntimeLink } from "./link.js";
import { type SchedulerStatsListener, SchedulerStatsListeners } from "./stats-listeners.js";
import { untilAborted } from "./until-aborted.js";

interface LiveRequest {
  readonly requestId: string;
  /** Its index in #slots: forwarded frames name the request by it (see ToHost "frames"). */
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

type LinkMessage = Extract<ToHost, { c: string }>;

export class ThreadConnection implements RuntimeConnection, LinkedConnection {
  readonly info: ConnectionInfo;
  readonly handle: ConnectionHandle;
  readonly #link: RuntimeLink;
  readonly #id: string;
  readonly #requests = new Map<string, LiveRequest>();
  /** The same requests by slot; freed slots are reused (#freeSlots). */
  readonly #slots: (LiveRequest | undefined)[] = [];
  readonly #freeSlots: number[] = [];
  /** Who retained the connection on this thread (see RuntimeConnection.retain). */
  readonly #owners = new Set<object>();
  readonly #healthListeners = new Set<(error: Error) => void>();
  readonly #statsListeners = new SchedulerStatsListeners(); // issue 12
  readonly #onGone: () => void;
  #health: Error | undefined;
  #closed: Error | undefined;
  #shuttingDown: Promise<void> | undefined;

  constructor(link: RuntimeLink, attached: AttachResult, onGone: () => void) {
    this.#link = link;
    this.#id = attached.connectionId;
    this.#onGone = onGone;
    this.info = attached.info;
    this.handle = Object.freeze({ connectionId: attached.connectionId, __vllmConnectionHandle: 1 as const });
    if (attached.health !== null) this.#health = deserializeError(attached.health);
    link.register(this.#id, this);
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
    if (this.#requests.has(requestId)) throw new DuplicateRequestIdError({ requestId });
    // Encoded once, here: it validates the request on the caller's thread and keeps the runtime thread
    // free (with a DP coordinator the runtime only stamps the current wave into these bytes).
    const frames = encodeAddRequest(request).map(ownedFrame);
    const slot = this.#freeSlots.pop() ?? this.#slots.length;
    const live: LiveRequest = {
      requestId,
      slot,
      sink,
      owner: options.owner,
      engineIndex: -1,
      release: this.#link.hold(),
      failing: false,
    };
    this.#requests.set(requestId, live);
    this.#slots[slot] = live;
    try {
      const reply = await this.#link.call({
        t: "submit",
        connectionId: this.#id,
        requestId,
        slot,
        dataParallelRank: request.dataParallelRank ?? null,
        frames,
      }).result;
      live.engineIndex = reply.engineIndex;
      return { engineIndex: reply.engineIndex };
    } catch (error) {
      this.#drop(live);
      throw error;
    }
  }

  async abort(requestIds: readonly string[]): Promise<string[]> {
    this.#assertOpen();
    // This thread's sinks end at once; outputs already on their way are dropped. The one place a request of
    // this thread is finalised by its own abort (other threads' aborts arrive as ToHost "aborted").
    for (const requestId of requestIds) {
      const live = this.#requests.get(requestId);
      if (live !== undefined && this.#drop(live)) safely(() => live.sink.aborted(live.engineIndex));
    }
    const result = await this.#link.call({
      t: "abort",
      connectionId: this.#id,
      requestIds: [...requestIds],
    }).result;
    return result.live.map(([requestId]) => requestId);
  }

  retain(owner: object): void {
    this.#assertOpen();
    this.#owners.add(owner);
  }

  async release(owner: object, error: Error): Promise<void> {
    const owned: string[] = [];
    for (const live of [...this.#requests.values()]) {
      if (live.owner !== owner || !this.#drop(live)) continue;
      owned.push(live.requestId);
      safely(() => live.sink.fail(error));
    }
    // The last owner that retained the connection here: the thread is done with it (detach aborts what is
    // left of this thread's requests on the runtime).
    if (this.#owners.delete(owner) && this.#owners.size === 0) {
      await this.detach();
      return;
    }
    if (owned.length === 0 || this.#closed !== undefined) return;
    try {
      await this.#link.call({ t: "abort", connectionId: this.#id, requestIds: owned }).result;
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
    const { id, result } = this.#link.call({
      t: "utility",
      connectionId: this.#id,
      method,
      args: [...args].map(packArgs),
      timeoutMs: timeoutMs ?? null,
    });
    const replies = await (signal === undefined
      ? result
      : untilAborted(result, signal, () => this.#link.post({ t: "cancel", id })));
    return replies.map(({ engineIndex, output }) => ({ engineIndex, output: unpackUtilityOutput(output) }));
  }

  async diagnostics(): Promise<ConnectionDiagnostics> {
    this.#assertOpen();
    const { lastProtocolError, ...counters } = await this.#link.call({
      t: "diagnostics",
      connectionId: this.#id,
    }).result;
    const error = lastProtocolError === null ? null : deserializeError(lastProtocolError);
    return { ...counters, lastProtocolError: error instanceof ProtocolError ? error : null };
  }

  async detach(): Promise<void> {
    if (this.#closed !== undefined) return;
    this.#close(new ClientClosedError({ detail: "this thread detached from the connection" }), false);
    try {
      await this.#link.call({ t: "detach", connectionId: this.#id }).result;
    } catch {
      // The runtime or the connection is already gone: nothing left to detach from.
    }
  }

  /** Idempotent: every call resolves once the runtime closed the sockets (or the connection was closed). */
  shutdown(): Promise<void> {
    this.#shuttingDown ??= this.#shutdown();
    return this.#shuttingDown;
  }

  async #shutdown(): Promise<void> {
    if (this.#closed !== undefined) return;
    try {
      await this.#link.call({ t: "shutdown", connectionId: this.#id }).result;
    } catch (error) {
      // Already closed by another thread or the runtime is gone: the connection is closed either way.
      if (this.#closed === undefined) this.#close(asError(error), true);
      return;
    }
    // The runtime's "closed" message arrived before the reply; this is the fallback if it did not.
    this.#close(new ClientClosedError({ detail: "the connection was shut down" }), true);
  }

  // ---- link events --------------------------------------------------------------------------

  onMessage(message: LinkMessage): void {
    switch (message.t) {
      case "frames": {
        // The one full decode of an engine step's outputs (the runtime only read the request ids). The
        // runtime's slots say which of this thread's requests each output names: their ids are compared, not
        // rebuilt, and the lookup below is by slot.
        let decoded: OutputMessage;
        try {
          decoded = decodeOutputMessageKnowing(message.frames, message.slots, this.#slots);
        } catch (error) {
          this.#undecodable(message, error);
          return;
        }
        if (decoded.kind === "outputs") {
          const { engineIndex, timestamp, outputs, finishedRequests } = decoded.outputs;
          this.#deliver(engineIndex, timestamp, outputs, finishedRequests, message.slots);
        }
        return;
      }
      case "stats": // issue 12
        this.#statsListeners.emit(message.engineIndex, message.stats);
        return;
      case "fail": {
        const error = deserializeError(message.error);
        for (const requestId of message.requestIds) this.#failRequest(requestId, error);
        return;
      }
      case "aborted":
        for (const [requestId, engineIndex] of message.live) {
          const live = this.#requests.get(requestId);
          if (live !== undefined && this.#drop(live)) safely(() => live.sink.aborted(engineIndex));
        }
        return;
      case "health":
        this.#setHealth(deserializeError(message.error));
        return;
      case "closed":
        this.#close(deserializeError(message.error), true);
        return;
    }
  }

  onRuntimeEnded(error: Error): void {
    this.#close(error, true);
  }

  // ---- internals ----------------------------------------------------------------------------

  #deliver(
    engineIndex: number,
    timestamp: number,
    outputs: readonly EngineCoreOutput[],
    finished: readonly string[] | null,
    slots: Int32Array,
  ): void {
    // Hot path (one call per engine step with up to thousands of outputs): each output goes straight to
    // its sink, in order. The runtime named each output's request by this thread's slot, so no id is
    // hashed here; the id comparison (the same string object when the decode matched it) guards a slot that
    // was freed and reused since the runtime routed it.
    const bySlot = slots.length === outputs.length;
    for (let i = 0; i < outputs.length; i++) {
      const output = outputs[i]!;
      let live: LiveRequest | undefined;
      if (bySlot) {
        const slot = slots[i]!;
        if (slot < 0) continue;
        live = this.#slots[slot];
        if (live === undefined || live.requestId !== output.requestId) continue;
      } else {
        live = this.#requests.get(output.requestId); // the routing read and the decode disagree: by id
        if (live === undefined) continue;
      }
      if (live.failing) continue;
      if (output.finishReason !== null) this.#drop(live);
      try {
        live.sink.output(output, engineIndex, timestamp);
      } catch (error) {
        rethrowLater(error);
      }
    }
    // Finished on the engine without a final output here (e.g. aborted by the engine): the stream closed.
    if (finished !== null) {
      for (const requestId of finished) {
        const live = this.#requests.get(requestId);
        if (live !== undefined && !live.failing && this.#drop(live)) {
          safely(() => live.sink.fail(new RequestStreamClosedError({ requestId })));
        }
      }
    }
  }

  /**
   * Forwarded frames that do not decode: this thread's requests they name get nothing more, and the runtime
   * (which owns the fault rule, runtime-thread/output-faults.ts) judges the message and fails them.
   */
  #undecodable(message: Extract<LinkMessage, { t: "frames" }>, error: unknown): void {
    const route = readOutputRoute(message.frames[0] ?? new Uint8Array(0));
    const live: string[] = [];
    for (const requestId of [...route.requestIds, ...(route.finishedRequests ?? [])]) {
      const request = this.#requests.get(requestId);
      if (request === undefined || request.failing) continue;
      request.failing = true;
      live.push(requestId);
    }
    const protocolError =
      error instanceof ProtocolError
        ? error
        : new ProtocolError({
            struct: "EngineCoreOutputs",
            detail: asError(error).message,
          });
    this.#link.post({
      t: "undecodable",
      c: this.#id,
      seq: message.seq,
      senders: [...message.senders],
      frames: message.frames,
      error: serializeError(protocolError),
      live,
    });
  }

  #failRequest(requestId: string, error: Error): void {
    const live = this.#requests.get(requestId);
    if (live !== undefined && this.#drop(live)) safely(() => live.sink.fail(error));
  }

  /** Ends `live` in the registry (false when it already ended): its id and its slot are free again. */
  #drop(live: LiveRequest): boolean {
    if (this.#requests.get(live.requestId) !== live) return false;
    this.#requests.delete(live.requestId);
    this.#slots[live.slot] = undefined;
    this.#freeSlots.push(live.slot);
    live.release();
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
    for (const live of [...this.#requests.values()]) {
      if (this.#drop(live)) safely(() => live.sink.fail(error));
    }
    this.#link.unregister(this.#id, this);
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

/** A sink or listener threw: surface it as an uncaught error without breaking the delivery loop. */
function rethrowLater(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}
