// The CLI's own errors and the one place that turns any error into the line a user sees and an exit code.
// Exit codes: 0 ok, 1 runtime failure (engine, network, timeout), 2 usage (bad flags), 130 interrupted.

export const EXIT_OK = 0;
export const EXIT_RUNTIME = 1;
export const EXIT_USAGE = 2;
/** 128 + SIGINT, what a shell reports for a command stopped with Ctrl-C. */
export const EXIT_INTERRUPTED = 130;

/** Bad flags or arguments: nothing was started. */
export class CliUsageError extends Error {
  override readonly name = "CliUsageError";
  readonly code = "CLI_USAGE";
  constructor(
    readonly detail: string,
    readonly command: string | undefined,
  ) {
    super(`${detail}. Run \`vllm-engine-core ${command ? `${command} ` : ""}--help\` for the flags.`);
  }
}

/** Ctrl-C (SIGINT) or SIGTERM: the reason every pending operation is aborted with. */
export class CliInterruptedError extends Error {
  override readonly name = "CliInterruptedError";
  readonly code = "CLI_INTERRUPTED";
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}; everything this command started was closed`);
  }
}

/** A runtime failure the CLI detects itself (a request that ended with an error, a bad engine reply). */
export class CliRuntimeError extends Error {
  override readonly name = "CliRuntimeError";
  readonly code = "CLI_RUNTIME";
}

/** The `code` of the client's typed errors (every one has a stable `code` and says what to do). */
function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Usage problems the client reports (config and request validation happen before anything is sent). */
const USAGE_CODES = new Set(["CLI_USAGE", "INVALID_CONFIG", "INVALID_REQUEST", "MOCK_ENGINE_OPTIONS"]);

export function exitCodeFor(error: unknown): number {
  if (error instanceof CliInterruptedError) return EXIT_INTERRUPTED;
  const code = errorCode(error);
  return code !== undefined && USAGE_CODES.has(code) ? EXIT_USAGE : EXIT_RUNTIME;
}

/** What the client's advice means on this command line (its messages name the API's options). */
const CLI_HINTS: Record<string, string> = {
  HANDSHAKE_TIMEOUT: "On this command line the bound is --ready-timeout-s.",
  BIND_FAILED:
    "On this command line: --handshake-address, --advertised-host, --input-address/--output-address.",
};

/**
 * The single line printed for `error`: the typed error's own message (it names what happened and what to do),
 * prefixed with its code; with `verbose`, the stack follows.
 */
export function formatError(error: unknown, verbose: boolean): string {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const oneLine = message.replace(/\s*\n\s*/g, " ").trim();
  const prefix = code && code !== "CLI_USAGE" && code !== "CLI_INTERRUPTED" ? `${code}: ` : "";
  const hint = code !== undefined && CLI_HINTS[code] ? ` ${CLI_HINTS[code]}` : "";
  const kind = error instanceof CliInterruptedError ? "" : "error: ";
  const line = `vllm-engine-core: ${kind}${prefix}${oneLine}${hint}`;
  if (!verbose || !(error instanceof Error) || !error.stack) return line;
  return `${line}\n${error.stack}`;
}
