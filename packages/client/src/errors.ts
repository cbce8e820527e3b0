// Every error this package can throw. Errors that cross threads (engine, runtime, transport) are
// defined once in @vllm-engine-core/protocol so that any thread can rebuild them; the client only
// adds the errors it raises itself on the calling thread.
export {
  BindError,
  ClientClosedError,
  ConnectAbortedError,
  DuplicateRequestIdError,
  EngineDeadError,
  HandshakeTimeoutError,
  InconsistentUtilityResultsError,
  InvalidDataParallelRankError,
  InvalidRequestError,
  ProtocolError,
  RequestStreamClosedError,
  RuntimeCrashedError,
  RuntimeHostUnavailableError,
  UnexpectedEngineIdentityError,
  UnexpectedHandshakeMessageError,
  UtilityCallError,
} from "@vllm-engine-core/protocol";

/** The configuration given to `EngineCoreClient.connect` is invalid; nothing was started. */
export class InvalidConfigError extends Error {
  override readonly name = "InvalidConfigError";
  readonly code = "INVALID_CONFIG";
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(`Invalid EngineCoreClient config at \`${field}\`: ${detail}. Fix the config and connect again.`);
  }
}
