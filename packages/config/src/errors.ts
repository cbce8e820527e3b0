// The one error for an invalid configuration. Raised by `resolveConfig` on the calling thread, before
// anything is started, so it normally never crosses a thread; it is registered like every error of the
// family all the same.
import { registerErrorClass, VllmEngineCoreError } from "@vllm-engine-core/errors";

/** The configuration given to `EngineCoreClient.connect` (or `openConnection`) is invalid; nothing was started. */
export class InvalidConfigError extends VllmEngineCoreError {
  override readonly name = "InvalidConfigError";
  static readonly code = "INVALID_CONFIG" as const;
  readonly code = InvalidConfigError.code;
  static {
    // After `code`: static members initialise in order.
    registerErrorClass(InvalidConfigError);
  }
  /** The offending setting, as a path from the config root (e.g. `transport.heartbeat.timeoutMs`). */
  readonly field: string;
  readonly detail: string;
  constructor(field: string, detail: string) {
    super(`Invalid EngineCoreClient config at \`${field}\`: ${detail}. Fix the config and connect again.`);
    this.field = field;
    this.detail = detail;
  }
}
