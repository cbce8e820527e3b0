// An ajv keyword, `lax`, that checks and converts a request field the way pydantic's lax mode does for
// vLLM's request models (FastAPI validates the parsed JSON body in Python mode, so lax rules apply). Its
// rules were read off pydantic 2.13 in vLLM's environment (one probe per rule; see test/lax.test.ts):
// - float: numbers, booleans (true → 1), strings that parse as a Python float after trimming ("1e3",
//   "inf", "1_000"); anything else float_parsing / float_type.
// - int: integers, floats without a fractional part, booleans, strings of an integer or of one with a zero
//   fraction ("1.0"); "1e3" and 1.5 are refused (int_parsing / int_from_float).
// - bool: booleans, 0 and 1, strings 0/off/f/false/n/no/1/on/t/true/y/yes in any case; nothing else.
// - str: strings only (numbers are refused, unlike ajv's own coercion).
// ajv's built-in `coerceTypes` differs on each of these (it turns 1 into "1", misses "yes", coerces null to
// 0), which is why the server's ajv runs with coercion off and the schemas use this keyword instead of `type`.
import type { Ajv, ErrorObject, SchemaValidateFunction } from "ajv";

/** A scalar or list type, optionally nullable (`int | None`). */
export type LaxScalar = "float" | "int" | "bool" | "str" | "dict" | "list" | "list[int]" | "list[str]";

export interface LaxSpec {
  type: LaxScalar | "model" | "union";
  /** `X | None`: null is accepted (pydantic refuses null for a plain `int` field). */
  nullable?: boolean;
  /** Union members, tried in order (pydantic's smart mode; only exact-type members are listed here). */
  of?: LaxScalar[];
  /** The model's class name (documentation: pydantic's error for a non-object does not name it). */
  name?: string;
  /** Inclusive bounds (pydantic Field(ge=…, le=…)). */
  ge?: number;
  le?: number;
}

/** One pydantic error, as FastAPI's `RequestValidationError.errors()` lists it (loc without "body"). */
export interface PyError {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** A value that Python prints as given (int64 bounds, which a JS number would round). */
export class PyLiteral {
  constructor(readonly text: string) {}
}

class Refusal {
  constructor(
    readonly type: string,
    readonly msg: string,
    readonly input: unknown,
    readonly loc: (string | number)[] = [],
    readonly ctx?: Record<string, unknown>,
  ) {}
}

const BOOL_STRINGS: Record<string, boolean> = {
  "0": false,
  off: false,
  f: false,
  false: false,
  n: false,
  no: false,
  "1": true,
  on: true,
  t: true,
  true: true,
  y: true,
  yes: true,
};

/** Python's float() on a str: optional sign, digits with single underscores between, inf/nan. */
function parsePyFloat(s: string): number | undefined {
  const t = s.trim();
  if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith("-") ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return Number.NaN;
  const digits = String.raw`\d(?:_?\d)*`;
  const re = new RegExp(`^[+-]?(?:${digits}(?:\\.(?:${digits})?)?|\\.${digits})(?:[eE][+-]?${digits})?$`);
  if (!re.test(t)) return undefined;
  return Number(t.replaceAll("_", ""));
}

function toFloat(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string") {
    const f = parsePyFloat(v);
    if (f !== undefined) return f;
    throw new Refusal(
      "float_parsing",
      "Input should be a valid number, unable to parse string as a number",
      v,
    );
  }
  throw new Refusal("float_type", "Input should be a valid number", v);
}

function toInt(v: unknown): number {
  const parsing = "Input should be a valid integer, unable to parse string as an integer";
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Refusal("finite_number", "Input should be a finite number", v);
    if (!Number.isInteger(v)) {
      throw new Refusal(
        "int_from_float",
        "Input should be a valid integer, got a number with a fractional part",
        v,
      );
    }
    return v;
  }
  if (typeof v === "string") {
    // pydantic: an integer string, or a decimal one whose fraction is all zeros ("1.0", " 2 ", "1_000").
    const t = v.trim();
    const m = /^([+-]?\d(?:_?\d)*)(?:\.0*)?$/.exec(t);
    if (m) return Number(m[1]!.replaceAll("_", ""));
    throw new Refusal("int_parsing", parsing, v);
  }
  throw new Refusal("int_type", "Input should be a valid integer", v);
}

function toBool(v: unknown): boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "number") {
    if (v === 0 || v === 1) return v === 1;
    if (Number.isInteger(v)) {
      throw new Refusal("bool_parsing", "Input should be a valid boolean, unable to interpret input", v);
    }
    throw new Refusal("bool_type", "Input should be a valid boolean", v);
  }
  if (typeof v === "string") {
    const b = BOOL_STRINGS[v.trim().toLowerCase()];
    if (b !== undefined) return b;
    throw new Refusal("bool_parsing", "Input should be a valid boolean, unable to interpret input", v);
  }
  throw new Refusal("bool_type", "Input should be a valid boolean", v);
}

function toStr(v: unknown): string {
  if (typeof v === "string") return v;
  throw new Refusal("string_type", "Input should be a valid string", v);
}

function isDict(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function toList(v: unknown, item: (x: unknown) => unknown): unknown[] {
  if (!Array.isArray(v)) throw new Refusal("list_type", "Input should be a valid list", v);
  const refusals: Refusal[] = [];
  let changed = false;
  const out = v.map((x, i) => {
    try {
      const converted = item(x);
      if (converted !== x) changed = true;
      return converted;
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      refusals.push(new Refusal(error.type, error.msg, error.input, [i, ...error.loc], error.ctx));
      return x;
    }
  });
  if (refusals.length > 0) throw refusals;
  // The body keeps its own array unless an item was converted.
  return changed ? out : v;
}

function convertScalar(type: LaxScalar, v: unknown): unknown {
  switch (type) {
    case "float":
      return toFloat(v);
    case "int":
      return toInt(v);
    case "bool":
      return toBool(v);
    case "str":
      return toStr(v);
    case "dict":
      if (isDict(v)) return v;
      throw new Refusal("dict_type", "Input should be a valid dictionary", v);
    case "list":
      if (Array.isArray(v)) return v;
      throw new Refusal("list_type", "Input should be a valid list", v);
    case "list[int]":
      return toList(v, toInt);
    case "list[str]":
      return toList(v, toStr);
  }
}

/** Converts `v` as the spec says, or throws the list of pydantic errors (loc relative to the field). */
export function laxConvert(spec: LaxSpec, v: unknown): unknown {
  if (v === null && spec.nullable) return null;
  const refusalsOf = (error: unknown): Refusal[] => {
    if (error instanceof Refusal) return [error];
    if (Array.isArray(error) && error.every((e) => e instanceof Refusal)) return error as Refusal[];
    throw error;
  };
  let out: unknown;
  if (spec.type === "model") {
    if (!isDict(v)) {
      throw [
        new Refusal(
          "model_attributes_type",
          "Input should be a valid dictionary or object to extract fields from",
          v,
        ),
      ];
    }
    out = v;
  } else if (spec.type === "union") {
    // pydantic lists one error per member, located under the member's name.
    const members = spec.of ?? [];
    const all: Refusal[] = [];
    let matched = false;
    for (const member of members) {
      try {
        out = convertScalar(member, v);
        matched = true;
        break;
      } catch (error) {
        for (const r of refusalsOf(error))
          all.push(new Refusal(r.type, r.msg, r.input, [member, ...r.loc], r.ctx));
      }
    }
    if (!matched) throw all;
  } else {
    if (v === null) {
      throw [
        new Refusal(
          `${spec.type === "str" ? "string" : spec.type.replace(/\[.*$/, "")}_type`,
          nullMessage(spec.type),
          v,
        ),
      ];
    }
    try {
      out = convertScalar(spec.type, v);
    } catch (error) {
      throw refusalsOf(error);
    }
  }
  if (typeof out === "number") {
    if (spec.ge !== undefined && !(out >= spec.ge)) {
      throw [
        new Refusal(
          "greater_than_equal",
          `Input should be greater than or equal to ${bound(spec.ge)}`,
          v,
          [],
          { ge: new PyLiteral(bound(spec.ge)) },
        ),
      ];
    }
    // INT64_MAX rounds to 2^63 as a JS number: anything from 2^63 up is over it.
    const over = spec.le === INT64_MAX ? out >= 2 ** 63 : spec.le !== undefined && !(out <= spec.le);
    if (spec.le !== undefined && over) {
      throw [
        new Refusal("less_than_equal", `Input should be less than or equal to ${bound(spec.le)}`, v, [], {
          le: new PyLiteral(bound(spec.le)),
        }),
      ];
    }
  }
  return out;
}

/** int64 bounds print as Python prints them (a JS number would round them). */
function bound(n: number): string {
  if (n === INT64_MAX) return "9223372036854775807";
  if (n === INT64_MIN) return "-9223372036854775808";
  return String(n);
}

/** vLLM's `_INT64_MAX` / `_INT64_MIN` (as JS numbers these round to ±2^63, so `le` compares with < 2^63). */
export const INT64_MAX = 2 ** 63 - 1;
export const INT64_MIN = -(2 ** 63);

function nullMessage(type: LaxScalar): string {
  switch (type) {
    case "float":
      return "Input should be a valid number";
    case "int":
      return "Input should be a valid integer";
    case "bool":
      return "Input should be a valid boolean";
    case "str":
      return "Input should be a valid string";
    case "dict":
      return "Input should be a valid dictionary";
    default:
      return "Input should be a valid list";
  }
}

/** Where each ajv error of this keyword carries its pydantic error (instancePath gives the field). */
export interface LaxErrorParams {
  pyError: PyError;
}

/** The ajv plugin: registers `lax` (modifying: the converted value replaces the input in the body). */
export function laxPlugin(ajv: Ajv): Ajv {
  const validate: SchemaValidateFunction = function laxValidate(
    this: unknown,
    spec: LaxSpec,
    data: unknown,
    _parent: unknown,
    cxt?: { parentData: unknown; parentDataProperty: string | number },
  ) {
    try {
      const out = laxConvert(spec, data);
      if (out !== data && cxt?.parentData !== undefined) {
        (cxt.parentData as Record<string | number, unknown>)[cxt.parentDataProperty] = out;
      }
      return true;
    } catch (error) {
      if (!Array.isArray(error)) throw error;
      (laxValidate as SchemaValidateFunction).errors = (error as Refusal[]).map(
        (r): Partial<ErrorObject> => ({
          keyword: "lax",
          message: r.msg,
          params: {
            pyError: {
              type: r.type,
              loc: r.loc,
              msg: r.msg,
              input: r.input,
              ...(r.ctx ? { ctx: r.ctx } : {}),
            },
          } satisfies LaxErrorParams,
        }),
      );
      return false;
    }
  };
  ajv.addKeyword({ keyword: "lax", modifying: true, errors: true, schemaType: "object", validate });
  return ajv;
}
