// Errors of the connection path and the sockets (raised by the transport on the runtime worker, rebuilt on
// the thread that connected).
import { VllmEngineCoreError } from "./base.js";
import { registerErrorClass } from "./registry.js";

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
  static readonly code = "HANDSHAKE_TIMEOUT" as const;
  readonly code = HandshakeTimeoutError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(HandshakeTimeoutError);
  }
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
  static readonly code = "UNEXPECTED_HANDSHAKE_MESSAGE" as const;
  readonly code = UnexpectedHandshakeMessageError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(UnexpectedHandshakeMessageError);
  }
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
  static readonly code = "UNEXPECTED_ENGINE_IDENTITY" as const;
  readonly code = UnexpectedEngineIdentityError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(UnexpectedEngineIdentityError);
  }
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
  static readonly code = "BIND_FAILED" as const;
  readonly code = BindError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(BindError);
  }
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
  static readonly code = "TRANSPORT_OUTSIDE_RUNTIME" as const;
  readonly code = TransportOutsideRuntimeError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(TransportOutsideRuntimeError);
  }
  constructor() {
    super(
      "The engine transport can only run inside the runtime worker thread. " +
        "Use @vllm-engine-core/runtime (openConnection) or @vllm-engine-core/client instead of importing the transport directly.",
    );
  }
}

/** The transport API was used in a way it does not support (e.g. a second output loop, an empty message). */
export class TransportUsageError extends VllmEngineCoreError {
  override readonly name = "TransportUsageError";
  static readonly code = "TRANSPORT_USAGE" as const;
  readonly code = TransportUsageError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(TransportUsageError);
  }
  readonly detail: string;
  constructor(options: { detail: string }) {
    super(`Transport misuse: ${options.detail}. This is a bug in the caller (the runtime worker).`);
    this.detail = options.detail;
  }
}
