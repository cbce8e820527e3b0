// Errors of the real-engine launchers. Each says what happened and what to do; the log tail is kept so a
// failing test shows why vLLM stopped.
import { registerErrorClass, VllmEngineCoreError } from "@vllm-engine-core/errors";

function tail(lines: readonly string[], n = 30): string {
  return lines.slice(-n).join("\n");
}

/** waitForLog gave up: no log line matched within the bound. */
export class RealEngineLogTimeoutError extends VllmEngineCoreError {
  override readonly name = "RealEngineLogTimeoutError";
  static readonly code = "REAL_ENGINE_LOG_TIMEOUT" as const;
  readonly code = RealEngineLogTimeoutError.code;
  static {
    registerErrorClass(RealEngineLogTimeoutError);
  }
  readonly pattern: string;
  readonly timeoutMs: number;
  constructor(pattern: RegExp, timeoutMs: number, lines: readonly string[]) {
    super(
      `No vLLM log line matched ${pattern} within ${timeoutMs} ms; raise the bound on a loaded machine or check ` +
        `the pattern. Last lines:\n${tail(lines)}`,
    );
    this.pattern = String(pattern);
    this.timeoutMs = timeoutMs;
  }
}

/** The vLLM process exited while something still waited on it (a log line, a start-up). */
export class RealEngineExitedError extends VllmEngineCoreError {
  override readonly name = "RealEngineExitedError";
  static readonly code = "REAL_ENGINE_EXITED" as const;
  readonly code = RealEngineExitedError.code;
  static {
    registerErrorClass(RealEngineExitedError);
  }
  readonly exitCode: number | null;
  readonly signal: string | null;
  constructor(what: string, exitCode: number | null, signal: string | null, lines: readonly string[]) {
    super(
      `The vLLM process exited (code ${exitCode}, signal ${signal}) while waiting for ${what}; read its log ` +
        `below, fix the cause (flags, model directory, executor options) and start it again. Last lines:\n${tail(lines)}`,
    );
    this.exitCode = exitCode;
    this.signal = signal;
  }
}

/** An option passed to startRealEngine / startVllmServer cannot work. */
export class RealEngineOptionsError extends VllmEngineCoreError {
  override readonly name = "RealEngineOptionsError";
  static readonly code = "REAL_ENGINE_OPTIONS" as const;
  readonly code = RealEngineOptionsError.code;
  static {
    registerErrorClass(RealEngineOptionsError);
  }
  readonly option: string;
  constructor(option: string, detail: string) {
    super(`Real-engine option ${option}: ${detail}`);
    this.option = option;
  }
}
