// Errors of engines, connections, requests and the runtime thread (raised on the runtime worker or the
// calling thread, and rebuilt wherever they are delivered).
import { VllmEngineCoreError } from "./base.js";
import { registerErrorClass } from "./registry.js";

/** An engine died (ENGINE_CORE_DEAD sentinel or lost connection). */
export class EngineDeadError extends VllmEngineCoreError {
  override readonly name = "EngineDeadError";
  static readonly code = "ENGINE_DEAD" as const;
  readonly code = EngineDeadError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(EngineDeadError);
  }
  readonly engineIndex: number | null;
  readonly reason: string;
  /** `duringStartup`: the engine died while connecting (no request was in flight yet). */
  constructor(options: { engineIndex: number | null; reason: string; duringStartup?: boolean }) {
    const who = options.engineIndex === null ? "An engine" : `Engine ${options.engineIndex}`;
    const advice = options.duringStartup
      ? "The connect failed; check the engine's logs, fix the cause and connect again."
      : "In-flight requests were failed; check the engine's logs and restart it, then reconnect.";
    super(`${who} is dead: ${options.reason}. ${advice}`);
    this.engineIndex = options.engineIndex;
    this.reason = options.reason;
  }
}

/** The runtime worker thread crashed or exited unexpectedly. */
export class RuntimeCrashedError extends VllmEngineCoreError {
  override readonly name = "RuntimeCrashedError";
  static readonly code = "RUNTIME_CRASHED" as const;
  readonly code = RuntimeCrashedError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(RuntimeCrashedError);
  }
  readonly reason: string;
  constructor(options: { reason: string }) {
    super(
      `The engine-core runtime worker stopped unexpectedly: ${options.reason}. All requests were failed; open a new connection.`,
    );
    this.reason = options.reason;
  }
}

/** The runtime host of a connection is no longer reachable from this thread. */
export class RuntimeHostUnavailableError extends VllmEngineCoreError {
  override readonly name = "RuntimeHostUnavailableError";
  static readonly code = "RUNTIME_HOST_UNAVAILABLE" as const;
  readonly code = RuntimeHostUnavailableError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(RuntimeHostUnavailableError);
  }
  constructor(options: { detail?: string } = {}) {
    super(
      `The runtime is not reachable from this thread${options.detail ? ` (${options.detail})` : ""}. ` +
        "Call installRuntimeHost() on the main thread before worker threads connect, or open a new connection.",
    );
  }
}

/** The client (or connection) was closed before or during the operation. */
export class ClientClosedError extends VllmEngineCoreError {
  override readonly name = "ClientClosedError";
  static readonly code = "CLIENT_CLOSED" as const;
  readonly code = ClientClosedError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(ClientClosedError);
  }
  constructor(options: { detail?: string } = {}) {
    super(
      `The engine-core client is closed${options.detail ? ` (${options.detail})` : ""}. Create or attach a new connection to continue.`,
    );
  }
}

/** attach() was given something that is not a connection handle. */
export class InvalidConnectionHandleError extends VllmEngineCoreError {
  override readonly name = "InvalidConnectionHandleError";
  static readonly code = "INVALID_CONNECTION_HANDLE" as const;
  readonly code = InvalidConnectionHandleError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(InvalidConnectionHandleError);
  }
  readonly received: string;
  constructor(options: { received: string }) {
    super(
      `attach() expects the \`handle\` of a connected client or connection, got ${options.received}. Post \`client.handle\` from the thread that connected and pass it unchanged.`,
    );
    this.received = options.received;
  }
}

/** A request id is already in flight on this connection. */
export class DuplicateRequestIdError extends VllmEngineCoreError {
  override readonly name = "DuplicateRequestIdError";
  static readonly code = "DUPLICATE_REQUEST_ID" as const;
  readonly code = DuplicateRequestIdError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(DuplicateRequestIdError);
  }
  readonly requestId: string;
  constructor(options: { requestId: string }) {
    super(
      `Request id "${options.requestId}" is already in flight. Use a unique id per request (e.g. add a random suffix).`,
    );
    this.requestId = options.requestId;
  }
}

/** A request asked for a data-parallel rank that is not connected. */
export class InvalidDataParallelRankError extends VllmEngineCoreError {
  override readonly name = "InvalidDataParallelRankError";
  static readonly code = "INVALID_DATA_PARALLEL_RANK" as const;
  readonly code = InvalidDataParallelRankError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(InvalidDataParallelRankError);
  }
  readonly rank: number;
  readonly engineIndices: number[];
  constructor(options: { rank: number; engineIndices: readonly number[] }) {
    super(
      `No connected engine has data-parallel rank ${options.rank} (connected: ${options.engineIndices.join(", ") || "none"}). ` +
        "Pass one of the connected ranks or leave dataParallelRank unset.",
    );
    this.rank = options.rank;
    this.engineIndices = [...options.engineIndices];
  }
}

/**
 * A utility call got no answer from some engines within the caller's `timeoutMs`. The call was forgotten:
 * a reply that arrives later is dropped (counted in `diagnostics().lateUtilityReplies`).
 */
export class UtilityTimeoutError extends VllmEngineCoreError {
  override readonly name = "UtilityTimeoutError";
  static readonly code = "UTILITY_TIMEOUT" as const;
  readonly code = UtilityTimeoutError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(UtilityTimeoutError);
  }
  readonly method: string;
  /** The engines that had not answered when the timeout fired. */
  readonly engineIndices: number[];
  readonly timeoutMs: number;
  constructor(options: { method: string; engineIndices: readonly number[]; timeoutMs: number }) {
    const engines = options.engineIndices;
    super(
      `Utility call "${options.method}" got no answer from engine${engines.length === 1 ? "" : "s"} ${engines.join(", ")} ` +
        `within ${options.timeoutMs} ms. The engine may be hung or busy with a long step; check its health and logs, ` +
        "or pass a larger timeoutMs (a reply that still arrives is dropped).",
    );
    this.method = options.method;
    this.engineIndices = [...engines];
    this.timeoutMs = options.timeoutMs;
  }
}

/** The output stream of a request was closed before it finished. */
export class RequestStreamClosedError extends VllmEngineCoreError {
  override readonly name = "RequestStreamClosedError";
  static readonly code = "REQUEST_STREAM_CLOSED" as const;
  readonly code = RequestStreamClosedError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(RequestStreamClosedError);
  }
  readonly requestId: string;
  constructor(options: { requestId: string }) {
    super(
      `The output stream of request "${options.requestId}" was closed before the request finished (aborted or detached). ` +
        "Resubmit the request if you still need its output.",
    );
    this.requestId = options.requestId;
  }
}

/** connect() was aborted through its AbortSignal. */
export class ConnectAbortedError extends VllmEngineCoreError {
  override readonly name = "ConnectAbortedError";
  static readonly code = "CONNECT_ABORTED" as const;
  readonly code = ConnectAbortedError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(ConnectAbortedError);
  }
  constructor(options: { detail?: string } = {}) {
    super(
      `Connecting to the engines was aborted${options.detail ? ` (${options.detail})` : ""}; every socket opened so far was closed. Call connect again to retry.`,
    );
  }
}
