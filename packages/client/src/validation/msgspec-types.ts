// msgspec's type rules for each annotated field type, applied to the JavaScript value the codec would
// write. The engine decodes with a strict typed msgspec decoder (MsgpackDecoder(EngineCoreRequest) in
// vllm/v1/engine/core.py EngineCoreProc.process_input_sockets): a value of the wrong wire type fails
// the whole decode, which kills the engine's input thread.
//
// JS → wire, as the codec writes it: integral numbers and bigints → int; other numbers and Float64 →
// float64 (so 16.5 in an int field is a float on the wire, which msgspec rejects); null → nil;
// undefined → the field is left out (its default). msgspec accepts an int for a float field.
import { Float64, MsgpackExt } from "@vllm-engine-core/protocol";
import type { Checker } from "./checker.js";

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/** msgspec's name for the wire type the codec would write for `v` (as in "Expected `int`, got `float`"). */
export function wireTypeName(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (typeof v === "bigint") return "int";
  if (typeof v === "string") return "str";
  if (typeof v === "boolean") return "bool";
  if (v instanceof Float64) return "float";
  if (v instanceof MsgpackExt) return "ext";
  if (ArrayBuffer.isView(v)) return "bytes";
  if (Array.isArray(v) || v instanceof Set) return "array";
  if (typeof v === "object") return "object";
  return typeof v;
}

function expected(c: Checker, rule: string, field: string, v: unknown, type: string): never {
  return c.fail(rule, field, v, `Expected \`${type}\`, got \`${wireTypeName(v)}\``);
}

/** `int`: returned as a bigint so that comparisons stay exact beyond 2^53. */
export function int(c: Checker, field: string, v: unknown): bigint {
  if (typeof v === "bigint") {
    if (v < INT64_MIN || v > UINT64_MAX) c.fail("client.int.range", field, v);
    return v;
  }
  if (typeof v === "number" && Number.isInteger(v)) {
    if (!Number.isSafeInteger(v)) c.fail("client.int.safe", field, v);
    return BigInt(v);
  }
  return expected(c, "msgspec.int", field, v, "int");
}

/** `float`: a number or Float64 (an int on the wire is accepted by msgspec too). */
export function float(c: Checker, field: string, v: unknown): number {
  if (typeof v === "number") return v;
  if (v instanceof Float64) return v.value;
  if (typeof v === "bigint") return c.fail("client.float", field, v);
  return expected(c, "msgspec.float", field, v, "float");
}

export function str(c: Checker, field: string, v: unknown): string {
  if (typeof v !== "string") expected(c, "msgspec.str", field, v, "str");
  return v;
}

export function bool(c: Checker, field: string, v: unknown): boolean {
  if (typeof v !== "boolean") expected(c, "msgspec.bool", field, v, "bool");
  return v;
}

/** `list[T]` / `set[T]`: an Array or a Set (written as an array). */
export function list<T>(c: Checker, field: string, v: unknown, item: (field: string, v: unknown) => T): T[] {
  if (!Array.isArray(v) && !(v instanceof Set)) expected(c, "msgspec.array", field, v, "array");
  const items = [...(v as Iterable<unknown>)];
  return items.map((x, i) => item(`${field}[${i}]`, x));
}

/** `T | None`: null (nil) → null; undefined is handled by the struct (default / absent). */
export function nullable<T>(v: unknown, inner: (v: unknown) => T): T | null {
  return v === null || v === undefined ? null : inner(v);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The entries of a map-typed value (plain object or Map) as the codec writes them. */
export function entries(c: Checker, field: string, v: unknown): [unknown, unknown][] {
  if (v instanceof Map) return [...v.entries()];
  if (isPlainObject(v)) return Object.entries(v).filter(([, x]) => x !== undefined);
  return expected(c, "msgspec.object", field, v, "object");
}

/** `dict[str, T]` / `Mapping[str, T]`. */
export function strMap(
  c: Checker,
  field: string,
  v: unknown,
  value: (field: string, v: unknown) => void,
): void {
  for (const [k, x] of entries(c, field, v)) {
    if (typeof k !== "string") expected(c, "msgspec.dict_key", `${field}[${String(k)}]`, k, "str");
    value(`${field}[${JSON.stringify(k)}]`, x);
  }
}

/** A struct written as a map / array from an object: the object itself must be a plain object. */
export function structObject(
  c: Checker,
  field: string,
  v: unknown,
  wire: "array" | "object",
): Record<string, unknown> {
  if (!isPlainObject(v)) expected(c, wire === "array" ? "msgspec.array" : "msgspec.object", field, v, wire);
  return v;
}

/**
 * `Any`: what the codec's encodeAny writes, and what msgspec's untyped decode accepts: ext values only
 * of type 3 (MsgpackDecoder.ext_hook raises for others), hashable map keys (a map is not hashable).
 */
export function any(c: Checker, field: string, v: unknown, depth = 0): void {
  if (depth > 500) c.fail("client.any", field, v, "the value is nested too deeply (or contains a cycle)");
  switch (typeof v) {
    case "number":
    case "string":
    case "boolean":
    case "undefined":
      return;
    case "bigint":
      if (v < INT64_MIN || v > UINT64_MAX) c.fail("client.int.range", field, v);
      return;
    case "object":
      break;
    default:
      c.fail("client.any", field, v);
  }
  if (v === null || v instanceof Float64 || ArrayBuffer.isView(v)) return;
  if (v instanceof MsgpackExt) {
    if (v.type !== 3) {
      c.fail("msgspec.ext", field, v, `Extension type code ${v.type} is not supported`);
    }
    return;
  }
  if (Array.isArray(v) || v instanceof Set) {
    [...v].forEach((x, i) => {
      any(c, `${field}[${i}]`, x, depth + 1);
    });
    return;
  }
  if (v instanceof Map) {
    for (const [k, x] of v) {
      any(c, `${field}{key ${String(k)}}`, k, depth + 1);
      if (!hashable(k)) c.fail("msgspec.hashable", `${field}{key}`, k, "unhashable type: 'dict'");
      any(c, `${field}[${String(k)}]`, x, depth + 1);
    }
    return;
  }
  if (!isPlainObject(v)) c.fail("client.any", field, v);
  for (const [k, x] of Object.entries(v)) any(c, `${field}[${JSON.stringify(k)}]`, x, depth + 1);
}

/** Python hashability of a decoded key: arrays decode as tuples (hashable if their items are), maps as dicts. */
function hashable(k: unknown): boolean {
  if (k instanceof Map || isPlainObject(k)) return false;
  if (Array.isArray(k) || k instanceof Set) return [...k].every(hashable);
  return true;
}
