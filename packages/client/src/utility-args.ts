// Checks of utility-call arguments on the caller's thread, before anything is sent. The typed helpers
// check their parameters against the annotations of vLLM's EngineCore methods (vllm/v1/engine/core.py at
// the pinned revision): vLLM passes every non-Struct argument to the method unconverted, so a wrong type
// would only fail inside the engine (or, for a bool, be taken by its truthiness).
import { type LoRARequestInit, loraRequestValue, ProtocolError } from "@vllm-engine-core/protocol";
import { InvalidRequestError } from "./errors.js";

/** How a utility call is bounded. Without either it waits as long as the engines take, as vLLM does. */
export interface UtilityCallOptions {
  /** Aborting rejects the call with the signal's reason; a reply that still comes is dropped. */
  signal?: AbortSignal | undefined;
  /** Rejects with UtilityTimeoutError when some engine has not answered within this many ms. */
  timeoutMs?: number | undefined;
}

/** setTimeout's limit: a longer delay fires after 1 ms instead. */
export const MAX_UTILITY_TIMEOUT_MS = 2 ** 31 - 1;

/** `PauseMode = Literal["abort", "wait", "keep"]` (vllm/v1/engine/__init__.py). */
export type PauseMode = "abort" | "wait" | "keep";
const PAUSE_MODES: readonly string[] = ["abort", "wait", "keep"];

function invalid(field: string, detail: string): never {
  throw new InvalidRequestError({ field, detail });
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  return `a ${typeof value}`;
}

/** The `{ signal, timeoutMs }` argument of callUtility, callUtilityConsensus and every typed helper. */
export function checkCallOptions(options: UtilityCallOptions): UtilityCallOptions {
  if (typeof options !== "object" || options === null) {
    invalid("options", `expected { signal?, timeoutMs? }, got ${describe(options)}`);
  }
  const { signal, timeoutMs } = options;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    invalid("options.signal", `expected an AbortSignal, got ${describe(signal)}`);
  }
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      invalid(
        "options.timeoutMs",
        `expected a positive finite number of milliseconds, got ${describe(timeoutMs)}`,
      );
    }
    if (timeoutMs > MAX_UTILITY_TIMEOUT_MS) {
      invalid(
        "options.timeoutMs",
        `${timeoutMs} ms is more than the longest timer Node.js can run (${MAX_UTILITY_TIMEOUT_MS} ms, about 24.8 days); leave timeoutMs out to wait without a limit`,
      );
    }
  }
  return { signal, timeoutMs };
}

/** Checks for the typed helpers' parameters; `field` is `helper(parameter)`. */
export const arg = {
  int(field: string, value: unknown): number {
    if (typeof value !== "number" || !Number.isSafeInteger(value))
      invalid(field, `expected an integer, got ${describe(value)}`);
    return value;
  },
  /** remove_lora / pin_lora: the executor asserts `lora_id > 0`. */
  loraId(field: string, value: unknown): number {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      invalid(field, `expected a LoRA id (an integer > 0, vLLM asserts lora_id > 0), got ${describe(value)}`);
    }
    return value;
  },
  bool(field: string, value: unknown): boolean {
    if (typeof value !== "boolean") invalid(field, `expected a boolean, got ${describe(value)}`);
    return value;
  },
  str(field: string, value: unknown): string {
    if (typeof value !== "string") invalid(field, `expected a string, got ${describe(value)}`);
    return value;
  },
  strOrNull(field: string, value: unknown): string | null {
    if (value !== null && typeof value !== "string")
      invalid(field, `expected a string or null, got ${describe(value)}`);
    return value;
  },
  intOrNull(field: string, value: unknown): number | null {
    return value === null ? null : arg.int(field, value);
  },
  strListOrNull(field: string, value: unknown): string[] | null {
    if (value === null) return null;
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
      invalid(field, `expected an array of strings or null, got ${describe(value)}`);
    }
    return [...value];
  },
  pauseMode(field: string, value: unknown): PauseMode {
    if (typeof value !== "string" || !PAUSE_MODES.includes(value)) {
      invalid(field, `expected one of "abort", "wait", "keep" (vLLM's PauseMode), got ${describe(value)}`);
    }
    return value as PauseMode;
  },
  /** collective_rpc's `timeout: float | None`, in seconds. */
  secondsOrNull(field: string, value: unknown): number | null {
    if (value === null) return null;
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      invalid(field, `expected a positive number of seconds or null, got ${describe(value)}`);
    }
    return value;
  },
  /**
   * add_lora's `lora_request: LoRARequest`: vLLM converts it with msgspec.convert, and LoRARequest is
   * array_like, so it must travel as its positional array (built from the codec's field table).
   */
  loraRequest(field: string, value: LoRARequestInit): unknown[] {
    try {
      return loraRequestValue(value);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      // "LoRARequest.lora_int_id" → "addLora(lora).lora_int_id" (vLLM's field names).
      const path = error.field?.startsWith(error.struct) ? error.field.slice(error.struct.length) : "";
      return invalid(`${field}${path}`, error.detail);
    }
  },
};
