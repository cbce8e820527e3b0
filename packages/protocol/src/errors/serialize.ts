// Errors cross threads (worker → host, host → consuming thread) as plain structured-cloneable objects.
import { VllmEngineCoreError } from "./base.js";
import {
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
  RequestStreamClosedError,
  RuntimeCrashedError,
  RuntimeHostUnavailableError,
  TransportOutsideRuntimeError,
  UnexpectedEngineIdentityError,
  UnexpectedHandshakeMessageError,
  UtilityCallError,
  UtilityNotAvailableError,
  UtilityTimeoutError,
} from "./classes.js";

export interface SerializedError {
  __vllmError: string;
  message: string;
  stack: string | undefined;
  data: Record<string, unknown>;
}

type ErrorClass = abstract new (...args: never[]) => VllmEngineCoreError;

const registry = new Map<string, ErrorClass>();

/** Register an error class so deserializeError can rebuild it (the built-in classes are pre-registered). */
export function registerErrorClass(name: string, cls: ErrorClass): void {
  registry.set(name, cls);
}

for (const cls of [
  ProtocolError,
  HandshakeTimeoutError,
  UnexpectedHandshakeMessageError,
  UnexpectedEngineIdentityError,
  BindError,
  TransportOutsideRuntimeError,
  EngineDeadError,
  RuntimeCrashedError,
  RuntimeHostUnavailableError,
  ClientClosedError,
  DuplicateRequestIdError,
  InvalidRequestError,
  InvalidConnectionHandleError,
  InvalidDataParallelRankError,
  UtilityCallError,
  InconsistentUtilityResultsError,
  UtilityTimeoutError,
  UtilityNotAvailableError,
  RequestStreamClosedError,
  ConnectAbortedError,
] as const) {
  registry.set(cls.name, cls);
}

export function isSerializedError(value: unknown): value is SerializedError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { __vllmError?: unknown }).__vllmError === "string" &&
    typeof (value as { message?: unknown }).message === "string"
  );
}

/** Turn any thrown value into a structured-cloneable object. */
export function serializeError(err: unknown): SerializedError {
  if (err instanceof VllmEngineCoreError) {
    return { __vllmError: err.name, message: err.message, stack: err.stack, data: cloneable(err.toData()) };
  }
  if (err instanceof Error) {
    return { __vllmError: err.name || "Error", message: err.message, stack: err.stack, data: {} };
  }
  return { __vllmError: "Error", message: String(err), stack: undefined, data: {} };
}

/** Rebuild the error class named in a SerializedError; unknown names become a plain Error. */
export function deserializeError(obj: SerializedError | unknown): Error {
  if (!isSerializedError(obj)) return new Error(String((obj as { message?: unknown })?.message ?? obj));
  const cls = registry.get(obj.__vllmError);
  if (cls === undefined) {
    const err = new Error(obj.message);
    if (obj.__vllmError !== "Error") err.name = obj.__vllmError;
    if (obj.stack !== undefined) err.stack = obj.stack;
    return err;
  }
  // Bypass the constructor: the message was already composed on the originating thread.
  const err = Object.create(cls.prototype) as VllmEngineCoreError;
  Object.defineProperty(err, "message", { value: obj.message, writable: true, configurable: true });
  if (obj.stack !== undefined) {
    Object.defineProperty(err, "stack", { value: obj.stack, writable: true, configurable: true });
  }
  // `data` carries `code` and the structured fields (see VllmEngineCoreError.toData).
  Object.assign(err, { name: obj.__vllmError }, obj.data);
  return err;
}

function cloneable(data: Record<string, unknown>): Record<string, unknown> {
  // Structured clone rejects functions and symbols; keep everything else as is.
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if (typeof v === "function" || typeof v === "symbol") continue;
    out[k] = v;
  }
  return out;
}
