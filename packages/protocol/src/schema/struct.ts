// Field-table driven struct codecs. A struct is declared ONCE as a list of fields (wire name, camelCase
// key, codec, default); that table drives encoding, decoding and the TypeScript view types.
//
//   kind "array"  — msgspec array_like Struct: every field always written, in order; decode accepts
//                   arrays down to the last required field and ignores extra trailing elements.
//   kind "map"    — dataclass / plain Struct: map of all fields in order (fixmap if < 16 fields, else
//                   map16); decode ignores unknown keys, fills defaults, fails on missing required keys.
//   kind "sparse" — omit_defaults map Struct (SamplingParams): a key is written iff the view has it;
//                   header width from the total field count, count patched afterwards.
import { fail, WireFault, withSegment } from "../msgpack/fault.js";
import type { Reader } from "../msgpack/reader.js";
import type { Writer } from "../msgpack/writer.js";
import type { AnyCodec, Codec } from "./codec.js";

export interface Field<K extends string, O, I, R extends boolean> {
  readonly wire: string;
  readonly key: K;
  readonly codec: Codec<O, I>;
  readonly required: R;
  /** Default value factory (fresh object per call for mutable defaults). */
  readonly default: (() => O) | undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: type-erased field used in generic constraints
export type AnyField = Field<string, any, any, boolean>;

/** A field without a default (it must be on the wire; in TS views it is required unless nullable). */
export function required<K extends string, O, I>(
  wire: string,
  key: K,
  codec: Codec<O, I>,
): Field<K, O, I, true> {
  return { wire, key, codec, required: true, default: undefined };
}

/** A field with a default. */
export function optional<K extends string, O, I>(
  wire: string,
  key: K,
  codec: Codec<O, I>,
  dflt: () => NoInfer<O>,
): Field<K, O, I, false> {
  return { wire, key, codec, required: false, default: dflt };
}

type Out<P> = P extends Field<string, infer O, infer _I, boolean> ? O : never;
type In<P> = P extends Field<string, infer _O, infer I, boolean> ? I : never;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Decoded view: every field present (defaults filled in). */
export type ViewOf<F extends readonly AnyField[]> = Simplify<{ [P in F[number] as P["key"]]: Out<P> }>;

/** Encoder input: fields with a default (or that accept None) may be left out. */
export type InitOf<F extends readonly AnyField[]> = Simplify<
  {
    [P in F[number] as P["required"] extends true ? (null extends In<P> ? never : P["key"]) : never]: In<P>;
  } & {
    [P in F[number] as P["required"] extends true ? (null extends In<P> ? P["key"] : never) : P["key"]]?:
      | In<P>
      | undefined;
  }
>;

/** Sparse view (omit_defaults map struct): exactly the keys present. */
export type SparseOf<F extends readonly AnyField[]> = Simplify<{
  [P in F[number] as P["key"]]?: Out<P> | undefined;
}>;

/** Sparse encoder input: like SparseOf, with nested values in their encoder-input form. */
export type SparseInitOf<F extends readonly AnyField[]> = Simplify<{
  [P in F[number] as P["key"]]?: In<P> | undefined;
}>;

/** The decoded view type of a codec. */
export type Decoded<C> = C extends Codec<infer O, infer _I> ? O : never;
/** The encoder input type of a codec. */
export type Init<C> = C extends Codec<infer _O, infer I> ? I : never;

export type StructKind = "array" | "map" | "sparse";

export interface StructOptions {
  validate?: ((view: Record<string, unknown>) => string | undefined) | undefined;
}

export class StructCodec<V, I> implements Codec<V, I> {
  readonly label: string;
  readonly nullable = false;
  readonly fields: readonly AnyField[];
  /** Array structs: minimum decodable length (index of the last required field + 1). */
  readonly minLength: number;
  private readonly byWire = new Map<string, number>();
  /** Specialized decoder for array structs generated from the field table (see compileArrayDecoder). */
  private readonly compiled: ((r: Reader, n: number) => Record<string, unknown>) | undefined;

  /** Mirrors the struct's `__post_init__` checks (msgspec runs them on decode); returns a problem or undefined. */
  readonly validate: ((view: Record<string, unknown>) => string | undefined) | undefined;

  constructor(
    readonly name: string,
    readonly kind: StructKind,
    fields: readonly AnyField[],
    options: StructOptions = {},
  ) {
    this.validate = options.validate;
    this.label = name;
    this.fields = fields;
    let min = 0;
    fields.forEach((f, i) => {
      if (f.required) min = i + 1;
      this.byWire.set(f.wire, i);
    });
    this.minLength = min;
    this.compiled = kind === "array" ? compileArrayDecoder(name, fields, min) : undefined;
  }

  decode(r: Reader): V {
    const view = this.kind === "array" ? this.decodeArray(r) : this.decodeMap(r);
    if (this.validate !== undefined) {
      const problem = this.validate(view);
      if (problem !== undefined) fail(`${this.name} validation failed: ${problem}`);
    }
    return view as V;
  }

  encode(w: Writer, value: I): void {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      fail(
        `expected a ${this.name} object, got ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value}`,
      );
    }
    if (this.validate !== undefined) {
      const problem = this.validate(this.resolve(value as Record<string, unknown>));
      if (problem !== undefined) fail(`${this.name} validation failed: ${problem}`);
    }
    if (this.kind === "sparse") this.encodeSparse(w, value as Record<string, unknown>);
    else this.encodeAll(w, value as Record<string, unknown>);
  }

  private decodeArray(r: Reader): Record<string, unknown> {
    if (!r.isArray()) fail(`expected ${this.name} as an array, got ${describeNext(r)}`);
    const n = r.array();
    const fields = this.fields;
    if (n < this.minLength) fail(`expected array of at least length ${this.minLength}, got ${n}`);
    if (this.compiled !== undefined) return this.compiled(r, n);
    const out: Record<string, unknown> = {};
    const count = fields.length;
    let i = 0;
    try {
      for (; i < count; i++) {
        const f = fields[i]!;
        if (i < n) {
          // nil fast path: most optional fields are None on the wire.
          if (f.codec.nullable && r.buf[r.pos] === 0xc0 && r.pos < r.end) {
            r.pos++;
            out[f.key] = null;
          } else {
            out[f.key] = f.codec.decode(r);
          }
        } else {
          out[f.key] = f.default!();
        }
      }
    } catch (err) {
      throw withSegment(err, `.${fields[i]!.wire}`);
    }
    for (let j = count; j < n; j++) r.skip();
    return out;
  }

  private decodeMap(r: Reader): Record<string, unknown> {
    if (!r.isMap()) fail(`expected ${this.name} as a map, got ${describeNext(r)}`);
    const n = r.map();
    const fields = this.fields;
    const values = new Array<unknown>(fields.length);
    const seen = new Uint8Array(fields.length);
    let expect = 0;
    for (let k = 0; k < n; k++) {
      if (!r.isStr()) fail(`expected str keys in ${this.name}, got ${describeNext(r)}`);
      const key = r.str();
      // Keys usually come in declaration order: check the expected slot before the map lookup.
      const idx = expect < fields.length && fields[expect]!.wire === key ? expect : this.byWire.get(key);
      if (idx === undefined) {
        r.skip();
        continue;
      }
      expect = idx + 1;
      try {
        values[idx] = fields[idx]!.codec.decode(r);
      } catch (err) {
        throw withSegment(err, `.${key}`);
      }
      seen[idx] = 1;
    }
    const out: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (seen[i] === 1) out[f.key] = values[i];
      else if (this.kind === "sparse") continue;
      else if (f.required)
        throw withSegment(new WireFault(`missing required field "${f.wire}"`), `.${f.wire}`);
      else out[f.key] = f.default!();
    }
    return out;
  }

  private encodeAll(w: Writer, obj: Record<string, unknown>): void {
    const fields = this.fields;
    if (this.kind === "array") w.arrayHeader(fields.length);
    else w.mapHeader(fields.length);
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      try {
        if (this.kind === "map") w.str(f.wire);
        let v = obj[f.key];
        if (v === undefined) {
          if (f.default !== undefined) v = f.default();
          else if (f.codec.nullable) v = null;
          else fail(`missing required field "${f.key}"`);
        }
        f.codec.encode(w, v);
      } catch (err) {
        throw withSegment(err, `.${f.wire}`);
      }
    }
  }

  private encodeSparse(w: Writer, obj: Record<string, unknown>): void {
    const fields = this.fields;
    const wide = fields.length >= 16;
    const at = wide ? w.map16Placeholder() : w.fixmapPlaceholder();
    let count = 0;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      const v = obj[f.key];
      if (v === undefined) continue;
      try {
        w.str(f.wire);
        f.codec.encode(w, v);
      } catch (err) {
        throw withSegment(err, `.${f.wire}`);
      }
      count++;
    }
    if (wide) w.patchMap16(at, count);
    else w.patchFixmap(at, count);
  }

  /** The view with every absent key set to its default (for sparse structs). */
  resolve(view: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const f of this.fields) {
      const v = view[f.key];
      out[f.key] = v !== undefined ? v : f.default !== undefined ? f.default() : null;
    }
    return out;
  }
}

/**
 * Generate a straight-line decoder for an array struct from its field table: one object literal (a
 * single hidden class), nil checks and primitive reads inlined, no per-field dispatch. Returns
 * undefined where code generation is disabled (--disallow-code-generation-from-strings); the
 * interpreter in decodeArray is then used.
 */
function compileArrayDecoder(
  name: string,
  fields: readonly AnyField[],
  minLength: number,
): ((r: Reader, n: number) => Record<string, unknown>) | undefined {
  const codecs = fields.map((f) => f.codec);
  const inners = fields.map((f) => f.codec.inner);
  const defaults = fields.map((f) => f.default);
  const segments = fields.map((f) => `.${f.wire}`);
  const lines: string[] = [];
  lines.push(`let f = 0;`);
  lines.push(`const buf = r.buf;`);
  lines.push(`let ${fields.map((_, i) => `v${i}`).join(", ")};`);
  lines.push("try {");
  fields.forEach((f, i) => {
    const c = f.codec;
    let expr: string;
    if (c.nullable && c.inner !== undefined) {
      const innerExpr = c.inner.inline ?? `I[${i}].decode(r)`;
      expr = `(r.pos < r.end && buf[r.pos] === 0xc0) ? (r.pos++, null) : ${innerExpr}`;
    } else if (c.nullable) {
      expr = `(r.pos < r.end && buf[r.pos] === 0xc0) ? (r.pos++, null) : C[${i}].decode(r)`;
    } else {
      expr = c.inline ?? `C[${i}].decode(r)`;
    }
    lines.push(`f = ${i};`);
    if (i < minLength) lines.push(`v${i} = ${expr};`);
    else lines.push(`v${i} = n > ${i} ? ${expr} : D[${i}]();`);
  });
  lines.push("} catch (e) { throw withSegment(e, S[f]); }");
  lines.push(`for (let j = ${fields.length}; j < n; j++) r.skip();`);
  lines.push(`return { ${fields.map((f, i) => `${JSON.stringify(f.key)}: v${i}`).join(", ")} };`);
  const fnName = `decode${name.replace(/[^A-Za-z0-9_]/g, "")}`;
  const source = `return function ${fnName}(r, n) {\n${lines.join("\n")}\n};`;
  try {
    return new Function("C", "I", "D", "S", "withSegment", source)(
      codecs,
      inners,
      defaults,
      segments,
      withSegment,
    );
  } catch {
    return undefined;
  }
}

function describeNext(r: Reader): string {
  const b = r.peek();
  if (r.isArray()) return "array";
  if (r.isMap()) return "map";
  if (r.isStr()) return "str";
  if (r.isInt()) return "int";
  if (b === 0xc0) return "nil";
  if (b === 0xc2 || b === 0xc3) return "bool";
  if (b === 0xca || b === 0xcb) return "float";
  return "other";
}

export function arrayStruct<const F extends readonly AnyField[]>(
  name: string,
  fields: F,
  options?: StructOptions,
) {
  return new StructCodec<ViewOf<F>, InitOf<F>>(name, "array", fields, options);
}

export function mapStruct<const F extends readonly AnyField[]>(
  name: string,
  fields: F,
  options?: StructOptions,
) {
  return new StructCodec<ViewOf<F>, InitOf<F>>(name, "map", fields, options);
}

export function sparseStruct<const F extends readonly AnyField[]>(
  name: string,
  fields: F,
  options?: StructOptions,
) {
  return new StructCodec<SparseOf<F>, SparseInitOf<F>>(name, "sparse", fields, options);
}

export type { AnyCodec };
