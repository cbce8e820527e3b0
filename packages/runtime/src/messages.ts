// Every message that crosses a thread boundary inside the runtime package. Two mechanisms carry them:
//   rendezvous  a thread creates a MessageChannel and hands one end (its lane) to the main-thread host
//               (caller/host.ts): a worker thread with postMessageToThread, the main thread by a call. The
//               host passes it on to a runtime worker over that worker's parentPort, which also carries
//               the runtime's lifecycle reports (RuntimeToHost / HostToRuntime).
//   lane        one MessagePort per (thread, connection): calls and their replies, the outputs of that
//               thread's requests, the connection's events. Its `close` event is the other side's death.
// Messages are tagged objects (`t`); calls carry an id that the reply echoes. Errors travel as
// SerializedError and are rebuilt as typed classes on the receiving side.
import type { MessagePort } from "node:worker_threads";
import type { ResolvedConfig } from "@vllm-engine-core/config";
import type { SerializedError } from "@vllm-engine-core/errors";
import type { EngineCoreReadyResponse, SchedulerStats, UtilityOutput } from "@vllm-engine-core/protocol";
import type { ConnectionDiagnostics } from "./types.js";

/**
 * The version of this package's thread protocol. It names the rendezvous message, so two copies of the
 * package that speak different versions never take each other's lanes.
 */
const THREAD_PROTOCOL_VERSION = 4;

// ---------------------------------------------------------------------------------------------------
// Rendezvous: any thread → the main-thread host.

export const RENDEZVOUS = `vllm-engine-core:rendezvous:v${THREAD_PROTOCOL_VERSION}`;

export interface RendezvousMessage {
  t: typeof RENDEZVOUS;
  /** The runtime's end of the new lane. */
  port: MessagePort;
  /** The runtime generation that must serve it (attach), or null for any live one (connect). */
  gen: string | null;
}

/** Name of the internal error of a call the runtime did not serve because it retired: retry elsewhere. */
const RUNTIME_RETIRING = "RuntimeRetiring";

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
// Lane: thread → runtime.

/**
 * The one request/response map of a lane: each call's body (tagged `t`) and what the runtime answers.
 * Everything else is derived from it, with no cast on either side: Lane.call returns the result type of
 * the tag it sent; the runtime serves each tag with a handler that must return that tag's result; a reply
 * echoes its call's tag (CallReply). Adding a call = one entry here and one handler.
 */
export interface CallMap {
  /** The first call of a lane that opens a connection: the lane becomes this thread's lane of it. */
  connect: { body: { config: ResolvedConfig }; result: AttachResult };
  /** The first call of a lane that attaches this thread to an open connection. */
  attach: { body: { connectionId: string }; result: AttachResult };
  submit: {
    body: {
      requestId: string;
      /** The submitting thread's slot for it: forwarded outputs and endings name the request by it. */
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
  abort: { body: { requestIds: string[] }; result: AbortResult };
  utility: {
    body: { method: string; args: unknown[]; timeoutMs: number | null };
    /** Packed (packArgs) outputs, in engine order. */
    result: { engineIndex: number; output: UtilityOutput }[];
  };
  diagnostics: { body: object; result: ConnectionDiagnosticsWire };
  detach: { body: object; result: null };
  shutdown: { body: object; result: null };
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
  | { t: "adopt" }
  /**
   * Forwarded output frames (`seq`, see ToThread "frames") this thread could not decode: the runtime judges
   * the message as any undecodable one and fails this thread's requests it named (`live`).
   */
  | {
      t: "undecodable";
      seq: number;
      senders: number[];
      frames: Uint8Array[];
      error: SerializedError;
      live: RequestRef[];
    };

// ---------------------------------------------------------------------------------------------------
// Lane: runtime (or the host, for a lane it could not deliver) → thread.

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

/** One request of the receiving thread: its id, its slot there and its engine. */
export type RequestRef = [requestId: string, slot: number, engineIndex: number];

export type ToThread =
  | CallReply
  /**
   * One engine step's output message, undecoded, sent to each thread that owns a request it names: the
   * thread decodes it and delivers its own requests' outputs. `slots[i]` is the receiving thread's slot
   * of the request of output `i`, then of each `finished_requests` entry, -1 where it is not that
   * thread's. `seq` and `senders` (the engines of the socket it came on) only serve to report it back if
   * it cannot be decoded. The step's SchedulerStats, when it carries them, reach the thread in its own
   * decode of these frames: it gets no "stats" message for them (nor does it need one).
   */
  | { t: "frames"; seq: number; senders: readonly number[]; frames: Uint8Array[]; slots: Int32Array }
  /**
   * An engine's SchedulerStats (packed with packArgs), to every thread of the connection that does not
   * receive them inside a "frames" message of the same step.
   */
  | { t: "stats"; engineIndex: number; stats: SchedulerStats }
  /** These requests of the thread ended without a final output: failed (engine dead …) or aborted. */
  | { t: "ended"; requests: RequestRef[]; error: SerializedError | null }
  | { t: "health"; error: SerializedError }
  /** The connection was shut down (for every thread). */
  | { t: "closed"; error: SerializedError }
  /** The runtime cannot serve this lane: it retired, crashed, or never started. The lane closes next. */
  | { t: "gone"; error: SerializedError };

// ---------------------------------------------------------------------------------------------------
// Parent port: runtime worker ↔ main-thread host.

export type RuntimeToHost =
  | { t: "ready" }
  /** Open connections and connects in progress; the host refs the worker while either is non-zero. */
  | { t: "load"; open: number; connecting: number }
  /** The runtime accepts no new work and is closing its sockets; it ends by itself. */
  | { t: "retiring" }
  /** An uncaught error: the runtime closes every socket and ends by itself; its connections are lost. */
  | { t: "crashed"; reason: string };

export type HostToRuntime =
  /** A thread's lane, through the rendezvous. */
  | { t: "lane"; port: MessagePort }
  /** The process is exiting: close every socket now, then set `exitFlag` (the main thread is blocked on it). */
  | { t: "exit" }
  /** Tests only (testHooks): throw an uncaught error on the runtime thread. */
  | { t: "crash"; reason: string };

export interface RuntimeWorkerData {
  gen: string;
  /**
   * Int32[0] becomes 1 once the runtime has no socket left and opens none: after an "exit" request closed
   * them, after a crash closed them, or on retirement (the host's exit handler waits on it).
   */
  exitFlag: SharedArrayBuffer;
  /** Enables HostToRuntime "crash". */
  testHooks: boolean;
}
