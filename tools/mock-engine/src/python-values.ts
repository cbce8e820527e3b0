// How the Python engine sees a utility argument. vLLM decodes UTILITY payloads with its generic
// MsgpackDecoder (no type: `generic_decoder` in EngineCoreProc.process_input_sockets, vllm/v1/engine/core.py),
// so every argument arrives as a builtin: None, bool, int, float, str, bytes, list, dict. The protocol
// package's generic decoder gives the JS counterparts: null, boolean, number | bigint (ints), Float64 or a
// non-integral number (floats), string, Uint8Array, Array, a plain object or a Map (dicts), MsgpackExt.
import { Float64, MsgpackExt } from "@vllm-engine-core/protocol";

/** A Python exception: `str(exception)` is the message (vLLM puts it in `Call to <method> method failed: ...`). */
export class PyError extends Error {}

export type PyKind = "NoneType" | "bool" | "int" | "float" | "str" | "bytes" | "list" | "dict" | "ext";

export function pyKind(value: unknown): PyKind {
  if (value === null || value === undefined) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "bigint") return "int";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (value instanceof Float64) return "float";
  if (typeof value === "string") return "str";
  if (value instanceof Uint8Array) return "bytes";
  if (Array.isArray(value)) return "list";
  if (value instanceof MsgpackExt) return "ext";
  return "dict";
}

/** The number a Python int / float / bool stands for (bool is an int subclass), or undefined. */
export function pyNumber(value: unknown): number | undefined {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  if (value instanceof Float64) return value.value;
  return undefined;
}

/** Python truthiness. */
export function pyTruthy(value: unknown): boolean {
  switch (pyKind(value)) {
    case "NoneType":
      return false;
    case "bool":
    case "int":
    case "float":
      return pyNumber(value) !== 0;
    case "str":
      return (value as string).length > 0;
    case "bytes":
      return (value as Uint8Array).length > 0;
    case "list":
      return (value as unknown[]).length > 0;
    case "dict":
      return value instanceof Map ? value.size > 0 : Object.keys(value as object).length > 0;
    case "ext":
      return true;
  }
}

/**
 * `repr(float)`: the shortest round-trip digits (as JS), but with ".0" on integral values and
 * scientific notation below 1e-4 or from 1e16 on, exponent signed and two digits wide ("1e-05").
 */
export function pyFloatRepr(n: number): string {
  if (Number.isNaN(n)) return "nan";
  if (!Number.isFinite(n)) return n > 0 ? "inf" : "-inf";
  if (n === 0) return Object.is(n, -0) ? "-0.0" : "0.0";
  const [mantissa, exp] = n.toExponential().split("e") as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  const text = n.toFixed(Math.max(0, (mantissa.split(".")[1]?.length ?? 0) - e));
  return text.includes(".") ? text : `${text}.0`;
}

/** `repr(value)`. */
export function pyRepr(value: unknown): string {
  switch (pyKind(value)) {
    case "NoneType":
      return "None";
    case "bool":
      return value ? "True" : "False";
    case "int":
      return String(value);
    case "float":
      return pyFloatRepr(pyNumber(value)!);
    case "str":
      return `'${(value as string).replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
    case "bytes":
      return `b'${Buffer.from(value as Uint8Array).toString("latin1")}'`;
    case "list":
      return `[${(value as unknown[]).map(pyRepr).join(", ")}]`;
    case "dict": {
      const entries = value instanceof Map ? [...value] : Object.entries(value as object);
      return `{${entries.map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(", ")}}`;
    }
    case "ext":
      return "<object>";
  }
}

/** `str(value)` (what an f-string prints). */
export function pyStr(value: unknown): string {
  return typeof value === "string" ? value : pyRepr(value);
}

/**
 * `value >= other` / `value > other` with an int on the right, as Python evaluates it: numbers compare,
 * anything else raises `TypeError: '>=' not supported between instances of 'str' and 'int'`.
 */
export function pyCompareWithInt(
  value: unknown,
  op: ">" | ">=" | "<" | "<=",
  other: number,
  raise: (message: string) => never,
): boolean {
  const n = pyNumber(value);
  if (n === undefined) raise(`'${op}' not supported between instances of '${pyKind(value)}' and 'int'`);
  switch (op) {
    case ">":
      return n > other;
    case ">=":
      return n >= other;
    case "<":
      return n < other;
    case "<=":
      return n <= other;
  }
}

/** `iter(value)` as a list: a list's items, a str's characters, a dict's keys, a bytes' ints; else TypeError. */
export function pyIterate(value: unknown): unknown[] {
  switch (pyKind(value)) {
    case "list":
      return value as unknown[];
    case "str":
      return [...(value as string)];
    case "bytes":
      return [...(value as Uint8Array)];
    case "dict":
      return value instanceof Map ? [...value.keys()] : Object.keys(value as object);
    default:
      throw new PyError(`'${pyKind(value)}' object is not iterable`);
  }
}

/** `item in container` for a str item: substring for str, membership for list, key for dict; else TypeError. */
export function pyContainsStr(container: unknown, item: string): boolean {
  switch (pyKind(container)) {
    case "str":
      return (container as string).includes(item);
    case "list":
      return (container as unknown[]).includes(item);
    case "dict":
      return container instanceof Map ? container.has(item) : Object.hasOwn(container as object, item);
    case "bytes":
      throw new PyError("a bytes-like object is required, not 'str'");
    default:
      throw new PyError(`argument of type '${pyKind(container)}' is not iterable`);
  }
}
