// Typed codecs: one object per wire type, built once at module load. `decode` reads exactly one value;
// `encode` validates the JS value and writes msgspec's bytes. Struct field tables (struct.ts) are
// lists of these.
import { fail, withSegment } from "../msgpack/fault.js";
import { type Reader, setOwn, typeName } from "../msgpack/reader.js";
import { Float64 } from "../msgpack/values.js";
import type { Writer } from "../msgpack/writer.js";
import { encodeAny } from "./opaque.js";

export interface Codec<TOut, TIn = TOut> {
  /** Python-ish type description, used in docs and error messages. */
  readonly label: string;
  /** True when nil is an accepted value. */
  readonly nullable: boolean;
  decode(r: Reader): TOut;
  encode(w: Writer, value: TIn): void;
  /** For nullable wrappers: the wrapped codec (lets compiled struct decoders skip one call). */
  readonly inner?: AnyCodec;
  /** JS expression (over a Reader named `r`) that decodes this type inline in compiled struct decoders. */
  readonly inline?: string;
  /** For list codecs: the element codec. */
  readonly element?: AnyCodec;
  /** For dict[str, T] codecs: the value codec. */
  readonly values?: AnyCodec;
  /** For enums / literals: the allowed values. */
  readonly members?: readonly (number | string)[];
  /** For unions: the alternatives. */
  readonly alternatives?: readonly AnyCodec[];
}

// biome-ignore lint/suspicious/noExplicitAny: type-erased codec used by the field tables
export type AnyCodec = Codec<any, any>;

export function describeValue(v: unknown): string {
  if (v === null) return "null";
  if (v === undefined) return "undefined";
  if (typeof v === "number") return Number.isInteger(v) ? `integer ${v}` : `non-integer number ${v}`;
  if (typeof v === "bigint") return `bigint ${v}`;
  if (typeof v === "string") return "string";
  if (Array.isArray(v)) return "array";
  if (v instanceof Float64) return `Float64(${v.value})`;
  if (v instanceof Uint8Array) return "Uint8Array";
  return typeof v === "object" ? (v.constructor?.name ?? "object") : typeof v;
}

function encodeIntValue(w: Writer, v: unknown): void {
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) fail(`expected an integer, got ${describeValue(v)}`);
    w.int(v);
  } else if (typeof v === "bigint") {
    w.bigint(v);
  } else {
    fail(`expected an integer, got ${describeValue(v)}`);
  }
}

export const INT: Codec<number> = {
  label: "int",
  nullable: false,
  inline: "r.int()",
  decode: (r) => r.int(),
  encode: (w, v) => encodeIntValue(w, v),
};

/** int that may exceed 2^53 (seeds): number when safe, bigint otherwise. */
export const BIG_INT: Codec<number | bigint> = {
  label: "int",
  nullable: false,
  decode: (r) => r.intOrBig(),
  encode: (w, v) => encodeIntValue(w, v),
};

/** u64 ids (utility call ids): always bigint when decoded. */
export const CALL_ID: Codec<bigint, bigint | number> = {
  label: "int",
  nullable: false,
  decode: (r) => BigInt(r.intOrBig()),
  encode: (w, v) => encodeIntValue(w, v),
};

export const FLOAT: Codec<number, number | Float64> = {
  label: "float",
  nullable: false,
  inline: "r.float()",
  decode: (r) => r.float(),
  encode: (w, v) => {
    const x = v instanceof Float64 ? v.value : v;
    if (typeof x !== "number") fail(`expected a number, got ${describeValue(v)}`);
    w.f64(x);
  },
};

export const STR: Codec<string> = {
  label: "str",
  nullable: false,
  inline: "r.str()",
  decode: (r) => r.str(),
  encode: (w, v) => {
    if (typeof v !== "string") fail(`expected a string, got ${describeValue(v)}`);
    w.str(v);
  },
};

export const BOOL: Codec<boolean> = {
  label: "bool",
  nullable: false,
  inline: "r.bool()",
  decode: (r) => r.bool(),
  encode: (w, v) => {
    if (typeof v !== "boolean") fail(`expected a boolean, got ${describeValue(v)}`);
    w.bool(v);
  },
};

/** Python `Any`: see Reader.any and encodeAny for the value mapping. */
export const ANY: Codec<unknown> = {
  label: "Any",
  nullable: true,
  decode: (r) => r.any(),
  encode: (w, v) => encodeAny(w, v),
};

export function nullable<O, I>(inner: Codec<O, I>): Codec<O | null, I | null | undefined> {
  return {
    label: `${inner.label} | None`,
    nullable: true,
    inner,
    decode: (r) => (r.nil() ? null : inner.decode(r)),
    encode: (w, v) => {
      if (v === null || v === undefined) w.nil();
      else inner.encode(w, v);
    },
  };
}

/** int enum (IntEnum / Enum with int values): the value must be a member. */
export function intEnum<T extends number>(name: string, members: readonly T[]): Codec<T> {
  const set = new Set<number>(members);
  return {
    label: name,
    nullable: false,
    members,
    decode: (r) => {
      const v = r.int();
      if (!set.has(v)) fail(`invalid ${name} value ${v} (expected one of ${members.join(", ")})`);
      return v as T;
    },
    encode: (w, v) => {
      if (!set.has(v))
        fail(`invalid ${name} value ${describeValue(v)} (expected one of ${members.join(", ")})`);
      w.int(v);
    },
  };
}

/** str Literal[...]: the value must be one of the literals. */
export function strLiteral<T extends string>(name: string, members: readonly T[]): Codec<T> {
  const set = new Set<string>(members);
  return {
    label: name,
    nullable: false,
    members,
    decode: (r) => {
      const v = r.str();
      if (!set.has(v)) fail(`invalid ${name} value "${v}" (expected one of ${members.join(", ")})`);
      return v as T;
    },
    encode: (w, v) => {
      if (typeof v !== "string" || !set.has(v)) {
        fail(`invalid ${name} value ${JSON.stringify(v)} (expected one of ${members.join(", ")})`);
      }
      w.str(v);
    },
  };
}

function checkIterable(v: unknown): readonly unknown[] {
  if (Array.isArray(v)) return v;
  if (v instanceof Set) return [...v];
  return fail(`expected an array, got ${describeValue(v)}`);
}

/** list[T] (and set[T] with `unique`: duplicates collapse on decode, first occurrence wins). */
export function list<O, I>(inner: Codec<O, I>, options: { unique?: boolean } = {}): Codec<O[], readonly I[]> {
  const unique = options.unique === true;
  const intInner = (inner as unknown) === INT;
  return {
    label: `${unique ? "set" : "list"}[${inner.label}]`,
    nullable: false,
    element: inner,
    decode: (r) => {
      const n = r.array();
      const out = new Array<O>(n);
      let i = 0;
      try {
        if (intInner) {
          const buf = r.buf;
          for (; i < n; i++) {
            const b = r.pos < r.end ? buf[r.pos]! : -1;
            if (b >= 0 && b < 0x80) {
              r.pos++;
              out[i] = b as O;
            } else {
              out[i] = r.int() as O;
            }
          }
        } else {
          for (; i < n; i++) out[i] = inner.decode(r);
        }
      } catch (err) {
        throw withSegment(err, `[${i}]`);
      }
      return unique ? [...new Set(out)] : out;
    },
    encode: (w, v) => {
      const items = checkIterable(v);
      w.arrayHeader(items.length);
      let i = 0;
      try {
        for (; i < items.length; i++) inner.encode(w, items[i] as I);
      } catch (err) {
        throw withSegment(err, `[${i}]`);
      }
    },
  };
}

function entriesOf(v: unknown): [unknown, unknown][] {
  if (v instanceof Map) return [...v.entries()];
  if (typeof v === "object" && v !== null && !Array.isArray(v)) return Object.entries(v);
  return fail(`expected an object or Map, got ${describeValue(v)}`);
}

/** dict[str, T] → plain object. */
export function strMap<O, I>(inner: Codec<O, I>): Codec<Record<string, O>, Readonly<Record<string, I>>> {
  return {
    label: `dict[str, ${inner.label}]`,
    nullable: false,
    values: inner,
    decode: (r) => {
      const n = r.map();
      const out: Record<string, O> = {};
      let key = "";
      try {
        for (let i = 0; i < n; i++) {
          key = r.str();
          setOwn(out, key, inner.decode(r));
        }
      } catch (err) {
        throw withSegment(err, `[${JSON.stringify(key)}]`);
      }
      return out;
    },
    encode: (w, v) => {
      const entries = entriesOf(v);
      w.mapHeader(entries.length);
      for (const [k, val] of entries) {
        if (typeof k !== "string") fail(`expected string keys, got ${describeValue(k)}`);
        try {
          w.str(k);
          inner.encode(w, val as I);
        } catch (err) {
          throw withSegment(err, `[${JSON.stringify(k)}]`);
        }
      }
    },
  };
}

/** dict[int, float] (logit_bias): msgpack int keys; decoded to a Map, encoded from a Map or an object with integer keys. */
export const INT_FLOAT_MAP: Codec<
  Map<number, number>,
  ReadonlyMap<number, number> | Readonly<Record<string, number>>
> = {
  label: "dict[int, float]",
  nullable: false,
  decode: (r) => {
    const n = r.map();
    const out = new Map<number, number>();
    let i = 0;
    try {
      for (; i < n; i++) {
        const b = r.peek();
        if (!r.isInt()) fail(`expected int key, got ${typeName(b)}`);
        const k = r.int();
        out.set(k, r.float());
      }
    } catch (err) {
      throw withSegment(err, `{key ${i}}`);
    }
    return out;
  },
  encode: (w, v) => {
    const entries = entriesOf(v);
    w.mapHeader(entries.length);
    for (const [k, val] of entries) {
      const key = typeof k === "string" && /^-?\d+$/.test(k) ? Number(k) : k;
      try {
        INT.encode(w, key as number);
        FLOAT.encode(w, val as number);
      } catch (err) {
        throw withSegment(err, `[${String(k)}]`);
      }
    }
  },
};

/** Decode-side union of two codecs chosen by the next wire type. */
export function union<A, AI, B, BI>(
  label: string,
  first: { test: (r: Reader) => boolean; codec: Codec<A, AI>; accepts: (v: unknown) => boolean },
  second: { codec: Codec<B, BI> },
): Codec<A | B, AI | BI> {
  return {
    label,
    nullable: false,
    alternatives: [first.codec, second.codec],
    decode: (r) => (first.test(r) ? first.codec.decode(r) : second.codec.decode(r)),
    encode: (w, v) => {
      if (first.accepts(v)) first.codec.encode(w, v as AI);
      else second.codec.encode(w, v as BI);
    },
  };
}
