// This thread's end of one lane (a MessagePort; the runtime holds the other end): the calls it makes and
// their replies, and every other message of the connection, handed to the connection that owns the lane.
// The port emits `close` when the runtime thread ends or closes the lane; every pending call then fails.
import { MessageChannel, type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import { deserializeError } from "@vllm-engine-core/errors";
import {
  type CallBody,
  type CallMessage,
  type CallName,
  type CallReply,
  type CallResult,
  retiringError,
  type ToRuntime,
  type ToThread,
} from "../messages.js";

/**
 * Most messages one `message` event handles: the first, then up to this many more already queued (see
 * #drain). Bounded so that a backlog cannot hold this thread's event loop for long.
 */
const DRAIN_LIMIT = 256;

/** Every message of the lane but replies: what the connection that owns the lane handles. */
export type LaneEvent = Exclude<ToThread, CallReply | { t: "gone" }>;

export interface LaneOwner {
  onEvent(event: LaneEvent): void;
  /** The lane ended (the runtime is gone, or it closed the lane): `error` says why. */
  onEnded(error: Error): void;
}

interface PendingCall {
  readonly call: CallName;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class Lane {
  /** The runtime's end, to hand over through the rendezvous. */
  readonly remote: MessagePort;
  readonly #port: MessagePort;
  readonly #pending = new Map<number, PendingCall>();
  #nextId = 1;
  #holds = 0;
  #owner: LaneOwner | undefined;
  /** Why the lane ended; set once. */
  #ended: Error | undefined;
  /** What a close with no word before it means (see `whenClosedSilently`). */
  #silentCloseError: () => Error = retiringError;
  /** Set by closeWhenIdle while calls are pending: the lane closes after the last reply. */
  #closeWhenIdle: Error | undefined;

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    this.remote = port2;
    // A structured clone is untyped: ToThread is the contract of both ends (messages.ts).
    port1.on("message", (message: ToThread) => {
      this.#receive(message);
      this.#drain();
    });
    port1.on("close", () => this.#end(this.#silentCloseError()));
    port1.unref();
  }

  get ended(): Error | undefined {
    return this.#ended;
  }

  /** The connection that receives this lane's events from now on. */
  setOwner(owner: LaneOwner): void {
    this.#owner = owner;
  }

  /**
   * What a close without a word from the runtime means: before a connection is attached, a runtime that
   * retired (retry elsewhere); after, one that ended abruptly.
   */
  whenClosedSilently(error: () => Error): void {
    this.#silentCloseError = error;
  }

  /** Keep this thread alive (pending call, live request); returns the release function. */
  hold(): () => void {
    if (this.#holds++ === 0) this.#port.ref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0) this.#port.unref();
    };
  }

  post(message: ToRuntime): void {
    if (this.#ended === undefined) this.#port.postMessage(message);
  }

  /** Send a call; `id` lets the caller cancel it. The reply is typed by the call's tag (CallMap). */
  call<K extends CallName>(body: CallBody<K>): { id: number; result: Promise<CallResult<K>> } {
    const id = this.#nextId++;
    if (this.#ended !== undefined) return { id, result: Promise.reject(this.#ended) };
    const release = this.hold();
    const result = new Promise<CallResult<K>>((resolve, reject) => {
      this.#pending.set(id, { call: body.t, resolve: resolve as (value: unknown) => void, reject });
    }).finally(release);
    try {
      this.#port.postMessage({ ...body, id } as CallMessage);
    } catch (error) {
      // Nothing was sent (e.g. a DataCloneError for an argument that cannot cross threads): forget the
      // call, or it would keep this thread alive and reject unobserved when the lane ends.
      this.#pending.delete(id);
      release();
      throw error;
    }
    return { id, result };
  }

  /** This thread is done with the lane: the runtime sees it close (and releases what it held for it). */
  close(error: Error): void {
    this.#end(error);
  }

  /**
   * Closes the lane once no call is pending on it: a call the runtime is still finishing (a shutdown that
   * waits for the sockets to close) gets its reply first.
   */
  closeWhenIdle(error: Error): void {
    if (this.#pending.size === 0) this.#end(error);
    else this.#closeWhenIdle = error;
  }

  #receive(message: ToThread): void {
    switch (message.t) {
      case "ok":
      case "err":
        this.#settle(message);
        return;
      case "gone":
        this.#end(deserializeError(message.error));
        return;
      default:
        this.#owner?.onEvent(message);
    }
  }

  /**
   * Handles, in this same callback, the messages already queued behind the one just received. Node runs
   * the microtask queue after every `message` event, so without this a reader of many streams would wake
   * once per engine step and stream; with it, the steps that arrived together reach their streams together
   * and each reader wakes once for all of them (the outputs it has not read yet are merged, see the client's
   * RequestOutputs). Measured: the bench's replay throughput rows, README "Ring or port".
   */
  #drain(): void {
    for (let i = 0; i < DRAIN_LIMIT && this.#ended === undefined; i++) {
      const next = receiveMessageOnPort(this.#port);
      if (next === undefined) return;
      this.#receive(next.message as ToThread);
    }
  }

  #settle(reply: CallReply): void {
    const call = this.#pending.get(reply.id);
    if (call === undefined || call.call !== reply.call) return;
    this.#pending.delete(reply.id);
    if (reply.t === "ok") call.resolve(reply.value);
    else call.reject(deserializeError(reply.error));
    if (this.#closeWhenIdle !== undefined && this.#pending.size === 0) this.#end(this.#closeWhenIdle);
  }

  #end(error: Error): void {
    if (this.#ended !== undefined) return;
    this.#ended = error;
    // In the order the calls were made (ids grow: a Map iterates in insertion order).
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const call of pending) call.reject(error);
    this.#port.close();
    this.#owner?.onEnded(error);
  }
}
