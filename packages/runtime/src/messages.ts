// The one definition of every message that crosses a thread boundary inside the runtime package:
//   host channel  (BroadcastChannel, every thread ↔ the main-thread host): the rendezvous; its messages
//                 are private to caller/rendezvous.ts, which holds both ends
//   control       (BroadcastChannel per runtime generation): a thread introduces its link
//   link          (BroadcastChannel per thread and generation): calls, replies, outputs
//   parent port   (runtime worker ↔ the main-thread supervisor): load reports, retirement
// Messages are tagged objects (`t`); calls carry an id that the reply echoes. Errors travel as
// SerializedError (protocol's serializeError) and are rebuilt as typed classes on the receiving side.
import type { BroadcastChannel } from "node:worker_threads";
import type { ResolvedConfig } from "@vllm-engine-core/config";
import type { SerializedError } from "@vllm-engine-core/errors";
import {
  type EngineCoreReadyResponse,
  Float64,
  MsgpackExt,
  RUNTIME_PROTOCOL_VERSION,
  type SchedulerStats,
  type UtilityOutput,
} from "@vllm-engine-core/protocol";
import type { ConnectionDiagnostics } from "./types.js";

/**
 * Listen on a channel of this protocol. Node types what arrives as `any` (a structured clone carries no
 * type); the handler states the message type of the channel, which is this module's contract for it.
 */
export function receive<T>(channel: BroadcastChannel, handler: (message: T) => void): void {
  channel.onmessage = (event) => handler(event.data);
}

export function controlChannelName(gen: string): string {
  return `vllm-engine-core:runtime:v${RUNTIME_PROTOCOL_VERSION}:${gen}`;
}

export function linkChannelName(gen: string, threadKey: string): string {
  return `vllm-engine-core:link:v${RUNTIME_PROTOCOL_VERSION}:${gen}:${threadKey}`;
}

/** Name of the internal error the runtime answers with once it is retiring: the host retries elsewhere. */
const RUNTIME_RETIRING = "RuntimeRetiring";

/**
 * The runtime retired (or is retiring) before it could serve a call: thrown by the runtime thread (it
 * crosses as a SerializedError, by name) and by the caller's link when the generation is gone.
 */
export function retiringError(): Error {
  const error = new Error("the runtime is retiring and did not serve this call");
  error.name = RUNTIME_RETIRING;
  return error;
}

/** Whether an error means "this runtime retired before it could serve the call; use a fresh one". */
export function isRetiring(error: unknown): boolean {
  return error instanceof Error && error.name === RUNTIME_RETIRING;
}

// ---------------------------------------------------------------------------------------------------
// What the main-thread host knows of a runtime generation (the host channel itself: caller/rendezvous.ts).

export type RuntimeFate = { kind: "crashed"; error: SerializedError } | { kind: "retired" };

/** Whether a generation still accepts work, or how it ended. */
export type RuntimeWhereabouts = { alive: true } | { alive: false; fate: RuntimeFate };

// ---------------------------------------------------------------------------------------------------
// Control channel of one runtime generation.

export interface Hello {
  t: "hello";
  /** BroadcastChannel name of the new link (the thread created its end before saying hello). */
  link: string;
  threadKey: string;
  /** Null on the main thread (its death is the process's death); otherwise the sentinel's heartbeat. */
  heartbeat: SharedArrayBuffer | null;
  /** The frame ring (frame-ring.ts) the runtime writes this thread's forwarded engine steps into. */
  ring: SharedArrayBuffer;
  /** Names the ring (a cloned SharedArrayBuffer has no identity to compare): a new link brings a new one. */
  ringId: string;
}

// ---------------------------------------------------------------------------------------------------
// Link: thread → runtime.

/**
 * The one request/response map of the link: each call's body (tagged `t`) and what the runtime answers.
 * Everything else is derived from it, with no cast on either side: RuntimeLink.call returns the result type
 * of the tag it sent; the runtime serves each tag with a handler that must return that tag's result
 * (RuntimeService's CallHandlers); a reply echoes its call's tag (CallReply), which is how the link
 * gives the value its type when it arrives. Adding a call = one entry here, one handler, one pending map.
 */
export interface CallMap {
  connect: { body: { config: ResolvedConfig }; result: AttachResult };
  attach: { body: { connectionId: string }; result: AttachResult };
  submit: {
    body: {
      connectionId: string;
      requestId: string;
      /**
       * The submitting thread's index for this request (its registry's slot): forwarded output frames carry
       * each output's slot, so that thread finds the request without looking its id up.
       */
      slot: number;
      dataParallelRank: number | null;
      /**
       * Encoded once, on the submitting thread: [typeByte, payload, ...aux]. With a DP coordinator the
       * runtime stamps the current wave into these bytes (withCurrentWave), without re-encoding.
       */
      frames: Uint8Array[];
    };
    result: { engineIndex: number };
  };
  abort: { body: { connectionId: string; requestIds: string[] }; result: AbortResult };
  utility: {
    body: { connectionId: string; method: string; args: unknown[]; timeoutMs: number | null };
    /** Packed (packArgs) outputs, in engine order. */
    result: { engineIndex: number; output: UtilityOutput }[];
  };
  diagnostics: { body: { connectionId: string }; result: ConnectionDiagnosticsWire };
  detach: { body: { connectionId: string }; result: null };
  shutdown: { body: { connectionId: string }; result: null };
}

export type CallName = keyof CallMap;

/** The body of call `K` (all calls when K is not narrowed). */
export type CallBody<K extends CallName = CallName> = { [N in K]: { t: N } & CallMap[N]["body"] }[K];

// A flat map keeps CallResult<K> strict for a generic K (CallMap[K]["result"] would accept any call's result).
type CallResults = { [N in CallName]: CallMap[N]["result"] };

/** What the runtime answers to call `K`. */
export type CallResult<K extends CallName = CallName> = CallResults[K];

/** Call `K` as it crosses to the runtime: its body and the id its reply echoes. */
export type CallMessage<K extends CallName = CallName> = CallBody<K> & { id: number };

/** The runtime's answer to call `K`: its id and its tag, and that call's result or the error it failed with. */
export type CallReply<K extends CallName = CallName> = {
  [N in K]:
    | { t: "ok"; call: N; id: number; value: CallResult<N> }
    | { t: "err"; call: N; id: number; error: SerializedError };
}[K];

export type ToRuntime =
  | CallMessage
  /** Abort the pending call `id` (connect and utility calls are cancellable). */
  | { t: "cancel"; id: number }
  /** The thread received the connect reply and owns the connection now. */
  | { t: "adopt"; connectionId: string }
  /** The thread is going away (best effort, sent from its exit handler). */
  | { t: "bye" }
  /**
   * Forwarded output frames (`seq`, see ToHost "frames") this thread could not decode: the runtime judges
   * the message as any undecodable one and fails this thread's requests it named (`live`).
   */
  | {
      t: "undecodable";
      c: string;
      seq: number;
      senders: number[];
      frames: Uint8Array[];
      error: SerializedError;
      live: string[];
    };

// ---------------------------------------------------------------------------------------------------
// Link: runtime → thread.

export interface ConnectionInfoWire {
  inputAddress: string;
  outputAddress: string;
  engines: { index: number; outputAddress: string; readyResponse: EngineCoreReadyResponse }[];
  clientIndex: number;
  modelName?: string;
}

/** ConnectionDiagnostics as it crosses threads: the error travels serialized. */
export type ConnectionDiagnosticsWire = Omit<ConnectionDiagnostics, "lastProtocolError"> & {
  lastProtocolError: SerializedError | null;
};

export interface AttachResult {
  connectionId: string;
  info: ConnectionInfoWire;
  health: SerializedError | null;
}

export interface AbortResult {
  /** Ids that were still live on the runtime, with the engine each was routed to. */
  live: [requestId: string, engineIndex: number][];
}

/**
 * A ToHost message as the link carries it: `r`, how many frame-ring records the runtime had written before it
 * (caller/link-inbox.ts merges the two channels back into the runtime's order).
 */
export type LinkMessage = ToHost & { r: number };

export type ToHost =
  | { t: "welcome" }
  /** The runtime declared this thread dead (its sentinel stopped beating) and released its requests. */
  | { t: "evicted" }
  | CallReply
  /**
   * One engine step's output message, undecoded, sent to each thread that owns a request it names: the
   * thread decodes it and delivers its own requests' outputs. `slots[i]` is the receiving thread's slot of
   * the request of output `i` (see CallMap submit), -1 for an output that is not this thread's. `seq` (per
   * connection) and `senders` (the engines of the socket it came on) only serve to report it back if it
   * cannot be decoded.
   */
  | {
      t: "frames";
      c: string;
      seq: number;
      senders: readonly number[];
      frames: Uint8Array[];
      slots: Int32Array;
    }
  /** An engine's SchedulerStats (packed with packArgs), to every thread of the connection (stats-relay.ts). */
  | { t: "stats"; c: string; engineIndex: number; stats: SchedulerStats }
  /** These requests failed (engine dead). */
  | { t: "fail"; c: string; requestIds: string[]; error: SerializedError }
  /** Another thread aborted these requests of yours: their sinks end with `aborted`. */
  | { t: "aborted"; c: string; live: [string, number][] }
  | { t: "health"; c: string; error: SerializedError }
  /** The connection was shut down (for every thread). */
  | { t: "closed"; c: string; error: SerializedError };

// ---------------------------------------------------------------------------------------------------
// Parent port: runtime worker ↔ main-thread supervisor.

export type RuntimeToSupervisor =
  | { t: "ready" }
  /** Open connections and connects in progress; the supervisor refs the worker while either is non-zero. */
  | { t: "load"; open: number; connecting: number }
  /** The runtime accepts no new work and is closing its sockets; it ends by itself. */
  | { t: "retiring" }
  /** An uncaught error: the runtime closes every socket and ends by itself; its connections are lost. */
  | { t: "crashed"; reason: string };

export type SupervisorToRuntime =
  /** The process is exiting: close every socket now, then set `exitFlag` (the main thread is blocked on it). */
  | { t: "exit" }
  /** Tests only (testHooks): throw an uncaught error on the runtime thread. */
  | { t: "crash"; reason: string };

export interface RuntimeWorkerData {
  gen: string;
  /**
   * Int32[0] becomes 1 once the runtime has no socket left and opens none: after an "exit" request closed
   * them, after a crash closed them, or on retirement (the supervisor's exit handler waits on it).
   */
  exitFlag: SharedArrayBuffer;
  /** Enables SupervisorToRuntime "crash". */
  testHooks: boolean;
}

// ---------------------------------------------------------------------------------------------------
// Utility-call arguments cross threads by structured clone, which drops class identity. The two wrapper
// classes that carry msgspec meaning (Float64, MsgpackExt) are tagged on the way out and rebuilt inside.

const FLOAT64_TAG = "__vllmFloat64";
const EXT_TAG = "__vllmMsgpackExt";

export function packArgs(value: unknown): unknown {
  if (value instanceof Float64) return { [FLOAT64_TAG]: value.value };
  if (value instanceof MsgpackExt) return { [EXT_TAG]: [value.type, value.data] };
  if (Array.isArray(value)) return value.map(packArgs);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [packArgs(k), packArgs(v)]));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = packArgs(v);
    return out;
  }
  return value;
}

export function unpackArgs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unpackArgs);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [unpackArgs(k), unpackArgs(v)]));
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === FLOAT64_TAG) return new Float64(value[FLOAT64_TAG] as number);
    if (keys.length === 1 && keys[0] === EXT_TAG) {
      const [type, data] = value[EXT_TAG] as [number, Uint8Array];
      return new MsgpackExt(type, data);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = unpackArgs(v);
    return out;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A frame that can be cloned cheaply: structured clone copies a view's whole backing ArrayBuffer, and
 * encoder output or small received Buffers are views into large shared pools.
 */
export function ownedFrame(frame: Uint8Array): Uint8Array {
  if (
    frame.byteOffset === 0 &&
    frame.byteLength === frame.buffer.byteLength &&
    !(frame.buffer instanceof SharedArrayBuffer)
  ) {
    return frame;
  }
  return new Uint8Array(frame);
}

/** A utility output the runtime packed (packArgs), rebuilt: its result may hold Float64/MsgpackExt. */
export function unpackUtilityOutput(output: UtilityOutput): UtilityOutput {
  return unpackArgs(output) as UtilityOutput;
}
