// The codec's one error. Every other error of the project lives in @vllm-engine-core/errors (or the package
// that raises it).
import { registerErrorClass, VllmEngineCoreError } from "@vllm-engine-core/errors";

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
  static readonly code = "PROTOCOL_ERROR" as const;
  readonly code = ProtocolError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(ProtocolError);
  }
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
