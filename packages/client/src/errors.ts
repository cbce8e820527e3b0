// Every error this package can throw, and the family's base class. The errors that cross threads (engines,
// connections, the runtime, the transport) are @vllm-engine-core/errors; the codec's ProtocolError is
// @vllm-engine-core/protocol's; the config's InvalidConfigError is @vllm-engine-core/config's. The errors
// below are raised by the client itself, on the calling thread (request validation, utility results).
import { registerErrorClass, VllmEngineCoreError } from "@vllm-engine-core/errors";
import { VLLM_VERSION_INFO, type VllmVersion } from "@vllm-engine-core/protocol";

export { InvalidConfigError } from "@vllm-engine-core/config";
export {
  BindError,
  ClientClosedError,
  ConnectAbortedError,
  DuplicateRequestIdError,
  deserializeError,
  EngineDeadError,
  HandshakeTimeoutError,
  InvalidConnectionHandleError,
  InvalidDataParallelRankError,
  isSerializedError,
  RequestStreamClosedError,
  RuntimeCrashedError,
  RuntimeHostUnavailableError,
  type SerializedError,
  serializeError,
  TransportOutsideRuntimeError,
  TransportUsageError,
  UnexpectedEngineIdentityError,
  UnexpectedHandshakeMessageError,
  UtilityTimeoutError,
  VllmEngineCoreError,
} from "@vllm-engine-core/errors";
export { ProtocolError, type ProtocolErrorOutcome } from "@vllm-engine-core/protocol";

/**
 * Who enforces a request rule: `"decode"`, vLLM's engine while it decodes the request (breaking it kills the
 * engine's input thread); `"frontend"`, vLLM's frontend before the request reaches the engine (this client
 * is that frontend); `"client"`, this client's wire encoding (what JavaScript values it can represent).
 */
export type RuleStage = "decode" | "frontend" | "client";

/** Where vLLM enforces a request rule: an identifier, vLLM's wording, and the file + function. */
export interface RequestRule {
  /** Stable identifier, e.g. "SamplingParams.temperature.max" (see the client's rule table). */
  id: string;
  /** Who enforces it (see RuleStage). */
  stage: RuleStage;
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
  static readonly code = "INVALID_REQUEST" as const;
  readonly code = InvalidRequestError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(InvalidRequestError);
  }
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

/** A utility (RPC) call failed inside the engine. */
export class UtilityCallError extends VllmEngineCoreError {
  override readonly name = "UtilityCallError";
  static readonly code = "UTILITY_CALL_FAILED" as const;
  readonly code = UtilityCallError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(UtilityCallError);
  }
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
  static readonly code = "UTILITY_NOT_AVAILABLE" as const;
  readonly code = UtilityNotAvailableError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(UtilityNotAvailableError);
  }
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
  static readonly code = "INCONSISTENT_UTILITY_RESULTS" as const;
  readonly code = InconsistentUtilityResultsError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(InconsistentUtilityResultsError);
  }
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

/** `next()` was called on an output stream while an earlier `next()` on it had not settled yet. */
export class ConcurrentReadError extends VllmEngineCoreError {
  override readonly name = "ConcurrentReadError";
  static readonly code = "CONCURRENT_READ" as const;
  readonly code = ConcurrentReadError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(ConcurrentReadError);
  }
  readonly requestId: string;
  constructor(requestId: string) {
    super(
      `next() was called on the stream of request "${requestId}" while another next() on it is still pending. ` +
        "Await each next() before calling it again, or read the stream with one for-await loop.",
    );
    this.requestId = requestId;
  }
}
