// The exceptions vLLM's input thread dies of, by their Python type, so the mock can print what vLLM
// prints (threading's excepthook traceback) and tests can tell them apart.
//
// msgspec wraps a TypeError or ValueError raised inside __post_init__ or dec_hook into
// msgspec.ValidationError with the path appended (" - at `$[3]`"); anything else — AssertionError,
// vllm.exceptions.VLLMValidationError at the pin (an Exception, not a ValueError) — propagates unwrapped
// (msgspec _core.c ms_maybe_wrap_validation_error). Up to v0.25 VLLMValidationError is a ValueError and
// is wrapped too (DecodeRules.validationErrorIsValueError, sampling-params.ts postInit).

import { pyFloatRepr } from "../python-values.js";

export type PythonErrorType =
  | "msgspec.ValidationError"
  | "msgspec.DecodeError"
  | "vllm.exceptions.VLLMValidationError"
  | "ValueError"
  | "TypeError"
  | "AttributeError"
  | "AssertionError"
  | "IndexError"
  | "KeyError"
  | "RuntimeError"
  | "NotImplementedError";

export class PythonError extends Error {
  override readonly name = "PythonError";
  constructor(
    readonly type: PythonErrorType,
    readonly text: string,
  ) {
    super(`${type}: ${text}`);
  }
}

/** msgspec.ValidationError for a type mismatch or a missing field, at `path`. */
export function validationError(text: string, path: string): PythonError {
  return new PythonError("msgspec.ValidationError", path === "$" ? text : `${text} - at \`${path}\``);
}

/** Raised inside __post_init__ / dec_hook: TypeError and ValueError are wrapped by msgspec, the rest are not. */
export function raisedIn(path: string, type: PythonErrorType, text: string): PythonError {
  if (type === "TypeError" || type === "ValueError") return validationError(text, path);
  return new PythonError(type, text);
}

/** vllm.exceptions.VLLMValidationError, with its __str__ (parameter/value suffix). */
export function vllmValidationError(
  message: string,
  extras: { parameter?: string; value?: unknown } = {},
): PythonError {
  const parts: string[] = [];
  if (extras.parameter !== undefined) parts.push(`parameter=${extras.parameter}`);
  if (extras.value !== undefined && extras.value !== null) parts.push(`value=${pyRepr(extras.value)}`);
  return new PythonError(
    "vllm.exceptions.VLLMValidationError",
    parts.length > 0 ? `${message} (${parts.join(", ")})` : message,
  );
}

/** A Python-ish rendering of a decoded value for messages. */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return pyFloatRepr(v); // a decoded float field is a Python float
  if (typeof v === "bigint") return String(v);
  if (typeof v === "string") return `'${v}'`;
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  return String(v);
}
