import { VLLM_VERSION_INFO, type VllmVersion } from "../versions/versions.js";
import { VllmEngineCoreError } from "./base.js";

const VERSION_HINT =
  "Check that the engine runs the vLLM revision this client is pinned to (c67fe497) and that the frames were not corrupted.";

/**
 * What the runtime did about an engine output message it could not decode (see the runtime README):
 * failed the streams it carried, failed the utility call it answered, or treated its engine as dead.
 */
export type ProtocolErrorOutcome = "requests-failed" | "utility-call-failed" | "engine-dead";

const OUTCOME_TEXT: Record<ProtocolErrorOutcome, (engine: string) => string> = {
  "requests-failed": () =>
    "The requests whose outputs it carried were failed with this error; the engine's other requests go on.",
  "utility-call-failed": () => "The utility call it answered was failed with this error.",
  "engine-dead": (engine) =>
    `${engine} is treated as dead: its requests and utility calls were failed and it gets no new work.`,
};

/** A wire message could not be decoded (or a value could not be encoded) per vLLM's msgspec schema. */
export class ProtocolError extends VllmEngineCoreError {
  override readonly name = "ProtocolError";
  readonly code = "PROTOCOL_ERROR" as const;
  /** Struct or message being encoded/decoded, e.g. "EngineCoreOutputs". */
  readonly struct: string;
  /** Field path in wire (snake_case) names, e.g. "EngineCoreOutputs.outputs[3].new_token_ids[0]". */
  readonly field: string | undefined;
  /** What was wrong, without the struct/field prefix. */
  readonly detail: string;
  readonly direction: "decode" | "encode";
  /** The engine that sent the message, when the error is about an engine's output. */
  readonly engineIndex: number | undefined;
  /** What the client did about the message (engine outputs only). */
  readonly outcome: ProtocolErrorOutcome | undefined;

  constructor(options: {
    struct: string;
    field?: string | undefined;
    detail: string;
    direction?: "decode" | "encode";
    engineIndex?: number | undefined;
    outcome?: ProtocolErrorOutcome | undefined;
  }) {
    const direction = options.direction ?? "decode";
    const from = options.engineIndex === undefined ? "" : ` from engine ${options.engineIndex}`;
    const where = options.field ? ` at ${options.field}` : "";
    const outcome =
      options.outcome === undefined
        ? ""
        : ` ${OUTCOME_TEXT[options.outcome](options.engineIndex === undefined ? "The engine" : `Engine ${options.engineIndex}`)}`;
    const hint =
      direction === "decode"
        ? VERSION_HINT
        : "Fix the value passed to the encoder (see the field path) so it matches vLLM's schema.";
    super(`Cannot ${direction} ${options.struct}${from}${where}: ${options.detail}.${outcome} ${hint}`);
    this.struct = options.struct;
    this.field = options.field;
    this.detail = options.detail;
    this.direction = direction;
    this.engineIndex = options.engineIndex;
    this.outcome = options.outcome;
  }
}

export type HandshakeStage = "HELLO" | "READY" | "REGISTRATION" | "COORDINATOR";

const STAGE_TEXT: Record<HandshakeStage, string> = {
  HELLO: "a HELLO message on the handshake socket",
  READY: "a READY message on the handshake socket",
  REGISTRATION: "the input-socket registration (EngineCoreReadyResponse)",
  COORDINATOR: "the coordinator's engine subscriptions",
};

/** An engine did not complete a handshake stage in time. */
export class HandshakeTimeoutError extends VllmEngineCoreError {
  override readonly name = "HandshakeTimeoutError";
  readonly code = "HANDSHAKE_TIMEOUT" as const;
  readonly stage: HandshakeStage;
  readonly engineIndex: number | null;
  readonly address: string;
  readonly timeoutMs: number;
  constructor(options: {
    stage: HandshakeStage;
    engineIndex: number | null;
    address: string;
    timeoutMs: number;
  }) {
    const who = options.engineIndex === null ? "an engine" : `engine ${options.engineIndex}`;
    super(
      `Timed out after ${options.timeoutMs} ms waiting for ${STAGE_TEXT[options.stage]} from ${who} on ${options.address}. ` +
        "Check that the engine process is running, points at this address and is not still loading the model; raise readyTimeoutMs if startup is slow.",
    );
    this.stage = options.stage;
    this.engineIndex = options.engineIndex;
    this.address = options.address;
    this.timeoutMs = options.timeoutMs;
  }
}

/** A peer sent a handshake message this client does not expect (wrong frames, status or order). */
export class UnexpectedHandshakeMessageError extends VllmEngineCoreError {
  override readonly name = "UnexpectedHandshakeMessageError";
  readonly code = "UNEXPECTED_HANDSHAKE_MESSAGE" as const;
  readonly engineIndex: number | undefined;
  readonly address: string;
  readonly detail: string;
  constructor(options: { engineIndex?: number | undefined; address: string; detail: string }) {
    const who = options.engineIndex === undefined ? "a peer" : `engine ${options.engineIndex}`;
    super(
      `Unexpected handshake message from ${who} on ${options.address}: ${options.detail}. ` +
        "Make sure only vLLM engines of the pinned revision connect to this address.",
    );
    this.engineIndex = options.engineIndex;
    this.address = options.address;
    this.detail = options.detail;
  }
}

/** The engine indices a frontend expects: `start` … `start + count - 1`. */
export interface EngineIndexRange {
  start: number;
  count: number;
}

/**
 * A peer connected with a routing identity that is not one of the expected engine identities: not a 2-byte
 * engine index, or an index outside the expected range (vLLM's frontend refuses such a HELLO before INIT:
 * `vllm/v1/engine/utils.py` `wait_for_engine_startup`, "unexpected data parallel rank").
 */
export class UnexpectedEngineIdentityError extends VllmEngineCoreError {
  override readonly name = "UnexpectedEngineIdentityError";
  readonly code = "UNEXPECTED_ENGINE_IDENTITY" as const;
  readonly identityHex: string;
  /** The engine index the identity encodes, or null when it is not a 2-byte engine index. */
  readonly engineIndex: number | null;
  readonly address: string;
  /** The engine indices this client expects, when the identity was checked against them. */
  readonly expectedRange: EngineIndexRange | null;
  readonly expected: string;
  constructor(options: {
    identityHex: string;
    address: string;
    expected: string;
    engineIndex?: number | null | undefined;
    expectedRange?: EngineIndexRange | null | undefined;
  }) {
    const engineIndex = options.engineIndex ?? null;
    const which = engineIndex === null ? "" : ` (engine index ${engineIndex})`;
    super(
      `A peer with identity 0x${options.identityHex}${which} connected to ${options.address}, expected ${options.expected}. ` +
        "Check the engines' data-parallel ranks and the engine count / start index configured on this client.",
    );
    this.identityHex = options.identityHex;
    this.engineIndex = engineIndex;
    this.address = options.address;
    this.expectedRange = options.expectedRange ?? null;
    this.expected = options.expected;
  }
}

export type SocketRole = "handshake" | "input" | "output" | "coordinator";

/** A socket could not be bound. */
export class BindError extends VllmEngineCoreError {
  override readonly name = "BindError";
  readonly code = "BIND_FAILED" as const;
  readonly address: string;
  readonly socket: SocketRole;
  readonly causeMessage: string;
  constructor(options: { address: string; socket: SocketRole; causeMessage: string }) {
    super(
      `Could not bind the ${options.socket} socket to ${options.address}: ${options.causeMessage}. ` +
        "Choose a free port (or tcp://host:0) or remove the stale ipc path, and check the host address.",
    );
    this.address = options.address;
    this.socket = options.socket;
    this.causeMessage = options.causeMessage;
  }
}

/** The transport was instantiated outside the runtime worker thread. */
export class TransportOutsideRuntimeError extends VllmEngineCoreError {
  override readonly name = "TransportOutsideRuntimeError";
  readonly code = "TRANSPORT_OUTSIDE_RUNTIME" as const;
  constructor() {
    super(
      "The engine transport can only run inside the runtime worker thread. " +
        "Use @vllm-engine-core/runtime (openConnection) or @vllm-engine-core/client instead of importing the transport directly.",
    );
  }
}

/** An engine died (ENGINE_CORE_DEAD sentinel or lost connection). */
export class EngineDeadError extends VllmEngineCoreError {
  override readonly name = "EngineDeadError";
  readonly code = "ENGINE_DEAD" as const;
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
  readonly code = "RUNTIME_CRASHED" as const;
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
  readonly code = "RUNTIME_HOST_UNAVAILABLE" as const;
  constructor(options: { detail?: string } = {}) {
    super(
      `The runtime that owns this connection is not reachable${options.detail ? ` (${options.detail})` : ""}. ` +
        "The thread that opened it may have exited or shut it down; open a new connection.",
    );
  }
}

/** The client (or connection) was closed before or during the operation. */
export class ClientClosedError extends VllmEngineCoreError {
  override readonly name = "ClientClosedError";
  readonly code = "CLIENT_CLOSED" as const;
  constructor(options: { detail?: string } = {}) {
    super(
      `The engine-core client is closed${options.detail ? ` (${options.detail})` : ""}. Create or attach a new connection to continue.`,
    );
  }
}

/** attach() was given something that is not a connection handle. */
export class InvalidConnectionHandleError extends VllmEngineCoreError {
  override readonly name = "InvalidConnectionHandleError";
  readonly code = "INVALID_CONNECTION_HANDLE" as const;
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
  readonly code = "DUPLICATE_REQUEST_ID" as const;
  readonly requestId: string;
  constructor(options: { requestId: string }) {
    super(
      `Request id "${options.requestId}" is already in flight. Use a unique id per request (e.g. add a random suffix).`,
    );
    this.requestId = options.requestId;
  }
}

/** Where vLLM enforces a request rule: an identifier, vLLM's wording, and the file + function. */
export interface RequestRule {
  /** Stable identifier, e.g. "SamplingParams.temperature.max" (see the client's rule table). */
  id: string;
  /** The rule in vLLM's words, e.g. "temperature must be in [0, 2]". */
  text: string;
  /** The vLLM file and function that enforce it, e.g. "vllm/sampling_params.py SamplingParams._verify_args". */
  source: string;
  /** First vLLM version that enforces it, when older supported versions do not (e.g. "0.24"). */
  since?: VllmVersion | undefined;
}

/** A request failed client-side validation (it would crash the engine's input thread). */
export class InvalidRequestError extends VllmEngineCoreError {
  override readonly name = "InvalidRequestError";
  readonly code = "INVALID_REQUEST" as const;
  readonly requestId: string | undefined;
  /** Field path in the request as passed to the client (camelCase), e.g. "samplingParams.temperature". */
  readonly field: string;
  readonly detail: string;
  /** The offending value, rendered as text (undefined when the field is missing). */
  readonly value: string | undefined;
  /** The rule the value breaks, when it is one of vLLM's (or the client's) documented rules. */
  readonly rule: RequestRule | undefined;
  /**
   * The vLLM versions whose rules were applied: what the connected engines' registrations allow them to
   * be (see the client README, "Validation per vLLM version"), or what `validateRequest` was given.
   */
  readonly vllmVersions: VllmVersion[] | undefined;
  constructor(options: {
    requestId?: string | undefined;
    field: string;
    detail: string;
    value?: string | undefined;
    rule?: RequestRule | undefined;
    vllmVersions?: readonly VllmVersion[] | undefined;
  }) {
    const which = options.requestId === undefined ? "The request" : `Request "${options.requestId}"`;
    const shown = options.value === undefined ? "" : ` (value ${options.value})`;
    const rule = options.rule;
    const since = rule?.since === undefined ? "" : `, vLLM ${VLLM_VERSION_INFO[rule.since].label} and later`;
    const where = rule === undefined ? "" : ` [rule ${rule.id}, ${rule.source}${since}]`;
    super(
      `${which} is invalid at ${options.field}${shown}: ${options.detail}${where}. Fix that field and resubmit.`,
    );
    this.requestId = options.requestId;
    this.field = options.field;
    this.detail = options.detail;
    this.value = options.value;
    this.rule = rule === undefined ? undefined : { ...rule };
    this.vllmVersions = options.vllmVersions === undefined ? undefined : [...options.vllmVersions];
  }
}

/** A request asked for a data-parallel rank that is not connected. */
export class InvalidDataParallelRankError extends VllmEngineCoreError {
  override readonly name = "InvalidDataParallelRankError";
  readonly code = "INVALID_DATA_PARALLEL_RANK" as const;
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

/** A utility (RPC) call failed inside the engine. */
export class UtilityCallError extends VllmEngineCoreError {
  override readonly name = "UtilityCallError";
  readonly code = "UTILITY_CALL_FAILED" as const;
  readonly method: string;
  readonly engineIndex: number;
  readonly failureMessage: string;
  constructor(options: { method: string; engineIndex: number; failureMessage: string }) {
    super(
      `Utility call "${options.method}" failed on engine ${options.engineIndex}: ${options.failureMessage}. ` +
        "Check the method name and arguments against the engine's EngineCore API and the engine logs.",
    );
    this.method = options.method;
    this.engineIndex = options.engineIndex;
    this.failureMessage = options.failureMessage;
  }
}

/**
 * A utility method that the engine's vLLM version does not have (`UTILITY_METHODS`): refused before
 * anything is sent, instead of the engine's "object has no attribute" failure.
 */
export class UtilityNotAvailableError extends VllmEngineCoreError {
  override readonly name = "UtilityNotAvailableError";
  readonly code = "UTILITY_NOT_AVAILABLE" as const;
  readonly method: string;
  readonly engineIndex: number;
  /** The engine's `vllm_version` as it registered (undefined for v0.22 engines, which do not send it). */
  readonly reportedVersion: string | undefined;
  /** The vLLM versions the engine's registration allows it to be; none of them has the method. */
  readonly engineVersions: VllmVersion[];
  /** First version with the method, when it is newer than the engine. */
  readonly since: VllmVersion | undefined;
  /** Last version with the method, when the engine is newer. */
  readonly until: VllmVersion | undefined;
  constructor(options: {
    method: string;
    engineIndex: number;
    reportedVersion?: string | undefined;
    engineVersions: readonly VllmVersion[];
    since?: VllmVersion | undefined;
    until?: VllmVersion | undefined;
  }) {
    const versions = options.engineVersions.map((v) => VLLM_VERSION_INFO[v].label);
    const runs =
      options.reportedVersion === undefined
        ? `vLLM ${versions.join(" … ")}`
        : `vLLM ${options.reportedVersion}, ${versions.length === 1 ? "" : "read as "}${versions.join(" … ")}`;
    const span =
      options.since !== undefined
        ? `it exists from vLLM ${VLLM_VERSION_INFO[options.since].label} on`
        : options.until !== undefined
          ? `it was removed after vLLM ${VLLM_VERSION_INFO[options.until].label}`
          : "its version does not have it";
    super(
      `Engine ${options.engineIndex} (${runs}) has no utility method "${options.method}": ${span}. ` +
        "Nothing was sent; call it only on engines of a vLLM version that has it (see the client README, utilities per version).",
    );
    this.method = options.method;
    this.engineIndex = options.engineIndex;
    this.reportedVersion = options.reportedVersion;
    this.engineVersions = [...options.engineVersions];
    this.since = options.since;
    this.until = options.until;
  }
}

/** Engines returned different results for a call that must agree across engines. */
export class InconsistentUtilityResultsError extends VllmEngineCoreError {
  override readonly name = "InconsistentUtilityResultsError";
  readonly code = "INCONSISTENT_UTILITY_RESULTS" as const;
  readonly method: string;
  readonly results: unknown[];
  constructor(options: { method: string; results: readonly unknown[] }) {
    super(
      `Engines returned different results for utility call "${options.method}". ` +
        "The engines are in inconsistent states; inspect each engine (results are attached) or call them individually.",
    );
    this.method = options.method;
    this.results = [...options.results];
  }
}

/**
 * A utility call got no answer from some engines within the caller's `timeoutMs`. The call was forgotten:
 * a reply that arrives later is dropped (counted in `diagnostics().lateUtilityReplies`).
 */
export class UtilityTimeoutError extends VllmEngineCoreError {
  override readonly name = "UtilityTimeoutError";
  readonly code = "UTILITY_TIMEOUT" as const;
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
  readonly code = "REQUEST_STREAM_CLOSED" as const;
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
  readonly code = "CONNECT_ABORTED" as const;
  constructor(options: { detail?: string } = {}) {
    super(
      `Connecting to the engines was aborted${options.detail ? ` (${options.detail})` : ""}; every socket opened so far was closed. Call connect again to retry.`,
    );
  }
}
