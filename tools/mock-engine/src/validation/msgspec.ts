// msgspec's strict typed decode, applied to a generically decoded msgpack value (decodeValue of
// @vllm-engine-core/protocol: ints are numbers or bigints, floats are non-integral numbers or Float64,
// maps with only str keys are plain objects, others Maps, ext values MsgpackExt, bin Uint8Array).
// Paths are msgspec's: `$[3].temperature`.
import { Float64, MsgpackExt } from "@vllm-engine-core/protocol";
import { PythonError, validationError } from "./python-errors.js";

/** msgspec's name of the msgpack type of a decoded value. */
export function typeName(v: unknown): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  if (v instanceof Float64) return "float";
  if (typeof v === "string") return "str";
  if (Array.isArray(v)) return "array";
  if (v instanceof Uint8Array) return "bytes";
  if (v instanceof MsgpackExt) return "ext";
  return "object";
}

export function expected(type: string, v: unknown, path: string): PythonError {
  return validationError(`Expected \`${type}\`, got \`${typeName(v)}\``, path);
}

export function isInt(v: unknown): v is number | bigint {
  return typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));
}

/** `int`, as a bigint (Python ints are exact). */
export function decodeInt(v: unknown, path: string): bigint {
  if (!isInt(v)) throw expected("int", v, path);
  return BigInt(v);
}

/** `float`: a msgpack float, or an int (msgspec widens ints for float fields). */
export function decodeFloat(v: unknown, path: string): number {
  if (v instanceof Float64) return v.value;
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  throw expected("float", v, path);
}

export function decodeStr(v: unknown, path: string): string {
  if (typeof v !== "string") throw expected("str", v, path);
  return v;
}

export function decodeBool(v: unknown, path: string): boolean {
  if (typeof v !== "boolean") throw expected("bool", v, path);
  return v;
}

export function decodeList<T>(v: unknown, path: string, item: (v: unknown, path: string) => T): T[] {
  if (!Array.isArray(v)) throw expected("array", v, path);
  return v.map((x, i) => item(x, `${path}[${i}]`));
}

/** `T | None`. */
export function decodeOptional<T>(v: unknown, inner: (v: unknown) => T): T | null {
  return v === null ? null : inner(v);
}

/** A msgpack map as key/value pairs. */
export function mapEntries(v: unknown, path: string): [unknown, unknown][] {
  if (v instanceof Map) return [...v.entries()];
  if (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof Uint8Array) &&
    !(v instanceof Float64) &&
    !(v instanceof MsgpackExt)
  ) {
    return Object.entries(v);
  }
  throw expected("object", v, path);
}

/** dict[K, V] with typed keys and values (a key's path is msgspec's `...key`). */
export function decodeDict<K, V>(
  v: unknown,
  path: string,
  key: (k: unknown, path: string) => K,
  value: (x: unknown, path: string) => V,
): Map<K, V> {
  const out = new Map<K, V>();
  for (const [k, x] of mapEntries(v, path)) {
    const kk = key(k, `${path}[...]`);
    out.set(kk, value(x, `${path}[${String(k)}]`));
  }
  return out;
}

/**
 * `Any`: every value decodes, except ext types other than 3 (MsgpackDecoder.ext_hook raises
 * NotImplementedError) and unhashable dict keys (a map as a key: TypeError).
 */
export function decodeAny(v: unknown, path: string): unknown {
  if (v instanceof MsgpackExt) {
    // vllm/v1/serial_utils.py MsgpackDecoder.ext_hook (pickle types only with VLLM_ALLOW_INSECURE_SERIALIZATION).
    if (v.type !== 3)
      throw new PythonError("NotImplementedError", `Extension type code ${v.type} is not supported`);
    return v;
  }
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      decodeAny(x, `${path}[${i}]`);
    });
    return v;
  }
  if (v instanceof Map) {
    for (const [k, x] of v) {
      if (!hashableKey(k)) throw validationError("unhashable type: 'dict'", path);
      decodeAny(k, path);
      decodeAny(x, `${path}[...]`);
    }
    return v;
  }
  if (typeof v === "object" && v !== null && !(v instanceof Float64) && !(v instanceof Uint8Array)) {
    for (const [k, x] of Object.entries(v)) decodeAny(x, `${path}.${k}`);
  }
  return v;
}

/** msgspec decodes array keys as tuples (hashable when their items are); maps as keys are dicts. */
function hashableKey(k: unknown): boolean {
  if (Array.isArray(k)) return k.every(hashableKey);
  return (
    !(k instanceof Map) &&
    !(
      typeof k === "object" &&
      k !== null &&
      !(k instanceof Float64) &&
      !(k instanceof Uint8Array) &&
      !(k instanceof MsgpackExt)
    )
  );
}

/** dict[str, Any]. */
export function decodeStrAnyDict(v: unknown, path: string): Map<string, unknown> {
  return decodeDict(v, path, decodeStr, decodeAny);
}

export interface FieldSpec {
  name: string;
  /** Decodes the wire value (not called for absent fields). */
  decode: (v: unknown, path: string) => unknown;
  /** Absent = required. */
  default?: () => unknown;
}

/** A map-encoded Struct or dataclass: str keys, unknown keys ignored, missing fields → default or error. */
export function decodeMapStruct(
  v: unknown,
  path: string,
  fields: readonly FieldSpec[],
): Record<string, unknown> {
  const entries = mapEntries(v, path);
  const given = new Map<string, unknown>();
  for (const [k, x] of entries) {
    if (typeof k !== "string") throw expected("str", k, `${path}[...]`);
    given.set(k, x);
  }
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (given.has(f.name)) out[f.name] = f.decode(given.get(f.name), `${path}.${f.name}`);
    else if (f.default !== undefined) out[f.name] = f.default();
    else throw validationError(`Object missing required field \`${f.name}\``, path);
  }
  return out;
}

/** An array_like Struct: at least as many items as required fields, extra trailing items ignored. */
export function decodeArrayStruct(
  v: unknown,
  path: string,
  fields: readonly FieldSpec[],
): Record<string, unknown> {
  if (!Array.isArray(v)) throw expected("array", v, path);
  const required = fields.filter((f) => f.default === undefined).length;
  if (v.length < required) {
    throw validationError(`Expected \`array\` of at least length ${required}, got ${v.length}`, path);
  }
  const out: Record<string, unknown> = {};
  fields.forEach((f, i) => {
    out[f.name] = i < v.length ? f.decode(v[i], `${path}[${i}]`) : f.default!();
  });
  return out;
}

/** Enum / Literal: the value must be one of `members`. */
export function decodeMember<T extends string | number>(
  v: unknown,
  path: string,
  base: "int" | "str",
  members: readonly T[],
): T {
  const ok = base === "int" ? isInt(v) : typeof v === "string";
  if (!ok) throw expected(base, v, path);
  const key = base === "int" ? Number(v) : v;
  if (!members.includes(key as T)) {
    throw validationError(`Invalid enum value ${typeof v === "string" ? `'${v}'` : String(v)}`, path);
  }
  return key as T;
}

export const nullable =
  <T>(inner: (v: unknown, path: string) => T) =>
  (v: unknown, path: string): T | null =>
    decodeOptional(v, (x) => inner(x, path));
