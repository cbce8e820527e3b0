// Errors cross threads (runtime worker → calling thread → consuming thread) as plain structured-cloneable
// objects and are rebuilt as their typed classes on the far side. No list is kept by hand: every class
// registers itself by its `code` when its module loads (a static block calling registerErrorClass), and
// deserializeError looks the class up by the `code` the serialized details carry. The registry is keyed on
// globalThis, so two copies of this package in one process (a duplicated install) still share it.
import { VllmEngineCoreError } from "./base.js";

export interface SerializedError {
  /** The error's `name`. */
  __vllmError: string;
  message: string;
  stack: string | undefined;
  /** `code` and the typed details (VllmEngineCoreError.toData); empty for other errors. */
  data: Record<string, unknown>;
}

/** A concrete error class: constructible, with its stable code on the class. */
export type ErrorClass = (abstract new (...args: never[]) => VllmEngineCoreError) & { readonly code: string };

const REGISTRY_KEY = Symbol.for("vllm-engine-core.errors.registry.v1");
const holder = globalThis as Record<symbol, Map<string, ErrorClass> | undefined>;
const registry: Map<string, ErrorClass> = holder[REGISTRY_KEY] ?? new Map<string, ErrorClass>();
holder[REGISTRY_KEY] = registry;

/** Makes `cls` rebuildable by deserializeError on this thread; call it in the class's static block. */
export function registerErrorClass(cls: ErrorClass): void {
  registry.set(cls.code, cls);
}

/** The class registered for `code` on this thread, if its module is loaded. */
export function errorClassFor(code: string): ErrorClass | undefined {
  return registry.get(code);
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

/** Rebuild the error class registered for the serialized `code`; anything else becomes a plain Error. */
export function deserializeError(obj: SerializedError | unknown): Error {
  if (!isSerializedError(obj)) return new Error(String((obj as { message?: unknown })?.message ?? obj));
  const code = obj.data?.code;
  const cls = typeof code === "string" ? registry.get(code) : undefined;
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
