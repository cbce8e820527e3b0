// Every error this package can throw. Errors that cross threads (engine, runtime, transport) are
// defined once in @vllm-engine-core/protocol so that any thread can rebuild them; the client only
// adds the errors it raises itself on the calling thread.

// Raised by the one configuration schema (resolveConfig), which lives in @vllm-engine-core/config.
export { InvalidConfigError } from "@vllm-engine-core/config";
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
  VllmEngineCoreError,
} from "@vllm-engine-core/protocol";

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
