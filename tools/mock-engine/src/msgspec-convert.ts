// `msgspec.convert(value, type)` for the types vLLM's utility methods take, over the builtins a generic
// msgpack decode gives (see python-values.ts). Written from msgspec's documented rules and checked against
// msgspec 0.22.0's messages: strict mode (no str→int, no float→int, bool is not an int; an int is a valid
// float), dicts are "object" and lists "array" in messages, an array_like Struct is converted from an array
// at least as long as its required fields (extra trailing elements ignored, defaults filled in), then its
// `__post_init__` runs: a ValueError/TypeError there becomes a ValidationError, anything else propagates.
import { PyError, pyKind, pyNumber } from "./python-values.js";

export type MsgspecType =
  | "str"
  | "int"
  | "float"
  | "bool"
  | "None"
  /** Bare `dict` (dict[Any, Any]). */
  | "dict"
  | { readonly union: readonly MsgspecType[] }
  | ArrayLikeStruct;

export interface StructField {
  readonly name: string;
  readonly type: MsgspecType;
  /** Absent: the field is required. */
  readonly default?: () => unknown;
}

/** A `msgspec.Struct` declared with `array_like=True`. */
export interface ArrayLikeStruct {
  readonly struct: string;
  readonly fields: readonly StructField[];
  /** The class's `__post_init__`; throws PostInitError (ValueError/TypeError) or another Python error. */
  readonly postInit?: (value: Record<string, unknown>) => void;
}

/** msgspec.ValidationError. */
export class ValidationError extends PyError {}

/** A ValueError / TypeError raised by `__post_init__`: msgspec turns it into a ValidationError. */
export class PostInitError extends PyError {}

/** `T | None`. */
export function orNone(type: MsgspecType): MsgspecType {
  return { union: [type, "None"] };
}

function typeName(type: MsgspecType): string {
  if (typeof type === "string") {
    if (type === "None") return "null";
    if (type === "dict") return "object";
    return type;
  }
  if ("union" in type) {
    // msgspec prints `null` last (`str | null`, also for `None | str`).
    const names = type.union.filter((t) => t !== "None").map(typeName);
    if (type.union.includes("None")) names.push("null");
    return names.join(" | ");
  }
  return "array";
}

/** The name msgspec gives the value it got. */
function gotName(value: unknown): string {
  const kind = pyKind(value);
  switch (kind) {
    case "NoneType":
      return "null";
    case "list":
      return "array";
    case "dict":
      return "object";
    case "ext":
      return "ext";
    default:
      return kind;
  }
}

function at(path: readonly number[]): string {
  return path.length === 0 ? "" : ` - at \`$${path.map((i) => `[${i}]`).join("")}\``;
}

function mismatch(type: MsgspecType, value: unknown, path: readonly number[]): never {
  throw new ValidationError(`Expected \`${typeName(type)}\`, got \`${gotName(value)}\`${at(path)}`);
}

function matches(type: MsgspecType, value: unknown): boolean {
  const kind = pyKind(value);
  switch (type) {
    case "str":
      return kind === "str";
    case "int":
      return kind === "int";
    case "float":
      return kind === "float" || kind === "int";
    case "bool":
      return kind === "bool";
    case "None":
      return kind === "NoneType";
    case "dict":
      return kind === "dict";
    default:
      return false;
  }
}

function convertAt(value: unknown, type: MsgspecType, path: readonly number[]): unknown {
  if (typeof type === "string") {
    if (!matches(type, value)) mismatch(type, value, path);
    return type === "float" ? pyNumber(value) : value;
  }
  if ("union" in type) {
    for (const option of type.union) {
      if (typeof option === "string" && matches(option, value)) return convertAt(value, option, path);
      if (typeof option !== "string" && !("union" in option) && Array.isArray(value)) {
        return convertAt(value, option, path);
      }
    }
    return mismatch(type, value, path);
  }
  return convertStruct(value, type, path);
}

function convertStruct(
  value: unknown,
  type: ArrayLikeStruct,
  path: readonly number[],
): Record<string, unknown> {
  if (!Array.isArray(value)) mismatch(type, value, path);
  let required = 0;
  type.fields.forEach((field, i) => {
    if (field.default === undefined) required = i + 1;
  });
  if (value.length < required) {
    throw new ValidationError(
      `Expected \`array\` of at least length ${required}, got ${value.length}${at(path)}`,
    );
  }
  const out: Record<string, unknown> = {};
  type.fields.forEach((field, i) => {
    out[field.name] = i < value.length ? convertAt(value[i], field.type, [...path, i]) : field.default!();
  });
  try {
    type.postInit?.(out);
  } catch (error) {
    if (error instanceof PostInitError) throw new ValidationError(`${error.message}${at(path)}`);
    throw error;
  }
  return out;
}

/** msgspec.convert(value, type): the converted value, or a thrown ValidationError / `__post_init__` error. */
export function msgspecConvert(value: unknown, type: MsgspecType): unknown {
  return convertAt(value, type, []);
}

/** Whether `type` is a Struct class (what `_convert_msgspec_args` converts; everything else passes as is). */
export function isStructType(type: MsgspecType | string): type is ArrayLikeStruct {
  return typeof type === "object" && !("union" in type);
}
