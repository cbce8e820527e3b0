// The one error for an invalid configuration. Raised by `resolveConfig` on the calling thread, before
// anything is started, so it never crosses a thread.

/** The configuration given to `EngineCoreClient.connect` (or `openConnection`) is invalid; nothing was started. */
export class InvalidConfigError extends Error {
  override readonly name = "InvalidConfigError";
  readonly code = "INVALID_CONFIG";
  constructor(
    /** The offending setting, as a path from the config root (e.g. `transport.heartbeat.timeoutMs`). */
    readonly field: string,
    readonly detail: string,
  ) {
    super(`Invalid EngineCoreClient config at \`${field}\`: ${detail}. Fix the config and connect again.`);
  }
}
