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
  InvalidConnectionHandleError,
  InvalidDataParallelRankError,
  InvalidRequestError,
  ProtocolError,
  type RequestRule,
  RequestStreamClosedError,
  RuntimeCrashedError,
  RuntimeHostUnavailableError,
  UnexpectedEngineIdentityError,
  UnexpectedHandshakeMessageError,
  UtilityCallError,
  UtilityNotAvailableError,
  UtilityTimeoutError,
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

/** `next()` was called on an output stream while an earlier `next()` on it had not settled yet. */
export class ConcurrentReadError extends Error {
  override readonly name = "ConcurrentReadError";
  readonly code = "CONCURRENT_READ";
  constructor(readonly requestId: string) {
    super(
      `next() was called on the stream of request "${requestId}" while another next() on it is still pending. ` +
        "Await each next() before calling it again, or read the stream with one for-await loop.",
    );
  }
}
