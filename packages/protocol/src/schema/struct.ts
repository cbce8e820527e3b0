// Field-table driven struct codecs. A struct is declared ONCE as a list of fields (wire name, camelCase
// key, codec, default, and the vLLM version that added the field); that table drives encoding,
// decoding, the TypeScript view types and the version compatibility table.
//
//   kind "array"  — msgspec array_like Struct: every field always written, in order; decode accepts
//                   arrays down to the last required field and ignores extra trailing elements.
//   kind "map"    — dataclass / plain Struct: map of all fields in order (fixmap if < 16 fields, else
//                   map16); decode ignores unknown keys, fills defaults, fails on missing required keys.
//   kind "sparse" — omit_defaults map Struct (SamplingParams): a key is written iff the view has it;
//                   header width from the total field count, count patched afterwards.
//
// Versions (src/versions): a field with `since` exists from that vLLM version on. Each version's
// layout is the table without the fields it predates. Decoding picks the layout per message from the
// wire: for arrays the newest layout not longer than the array (msgspec always writes every field, so
// the length is the sender's field count); for maps the newest `since` among the keys present. A field
// the sender's layout lacks is absent from the decoded view (never a neighbour's value, never a made-up
// default). Encoding writes the layout of `Writer.targetVersion`.
import { fail, WireFault, withSegment } from "../msgpack/fault.js";
import type { Reader } from "../msgpack/reader.js";
import type { Writer } from "../msgpack/writer.js";
import {
  PINNED_VERSION,
  VLLM_VERSION_INFO,
  VLLM_VERSIONS,
  type VllmVersion,
  versionHas,
  versionRank,
} from "../versions/versions.js";
import type { AnyCodec, Codec } from "./codec.js";

export interface Field<
  K extends string,
  O,
  I,
  R extends boolean,
  S extends VllmVersion | undefined = VllmVersion | undefined,
> {
  readonly wire: string;
  readonly key: K;
  readonly codec: Codec<O, I>;
  readonly required: R;
  /** Default value factory (fresh object per call for mutable defaults). */
  readonly default: (() => O) | undefined;
  /** The first vLLM version whose struct has this field (undefined: every supported version). */
  readonly since: S;
}

// biome-ignore lint/suspicious/noExplicitAny: type-erased field used in generic constraints
export type AnyField = Field<string, any, any, boolean, VllmVersion | undefined>;

/** A field without a default (it must be on the wire; in TS views it is required unless nullable). */
export function required<K extends string, O, I>(
  wire: string,
  key: K,
  codec: Codec<O, I>,
): Field<K, O, I, true, undefined> {
  return { wire, key, codec, required: true, default: undefined, since: undefined };
}

/** A field with a default. */
export function optional<K extends string, O, I>(
  wire: string,
  key: K,
  codec: Codec<O, I>,
  dflt: () => NoInfer<O>,
): Field<K, O, I, false, undefined> {
  return { wire, key, codec, required: false, default: dflt, since: undefined };
}

/**
 * The field exists only from vLLM `version` on. Engines (or frontends) of older versions do not have
 * it: it decodes as absent from their messages, so the view types it as optional.
 */
export function since<V extends VllmVersion, K extends string, O, I, R extends boolean>(
  version: V,
  field: Field<K, O, I, R, undefined>,
): Field<K, O, I, R, V> {
  return { ...field, since: version };
}

type Out<P> = P extends Field<string, infer O, infer _I, boolean, infer _S> ? O : never;
type In<P> = P extends Field<string, infer _O, infer I, boolean, infer _S> ? I : never;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Versioned<P> = P extends { since: VllmVersion } ? true : false;

/** Decoded view: every field present (defaults filled in), except those an older sender lacks. */
export type ViewOf<F extends readonly AnyField[]> = Simplify<
  { [P in F[number] as Versioned<P> extends true ? never : P["key"]]: Out<P> } & {
    [P in F[number] as Versioned<P> extends true ? P["key"] : never]?: Out<P>;
  }
>;

/** Encoder input: fields with a default (or that accept None, or that not every version has) may be left out. */
export type InitOf<F extends readonly AnyField[]> = Simplify<
  {
    [P in F[number] as Versioned<P> extends true
      ? never
      : P["required"] extends true
        ? null extends In<P>
          ? never
          : P["key"]
        : never]: In<P>;
  } & {
    [P in F[number] as Versioned<P> extends true
      ? P["key"]
      : P["required"] extends true
        ? null extends In<P>
          ? P["key"]
          : never
        : P["key"]]?: In<P> | undefined;
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

type CompiledDecoder = (r: Reader, n: number) => Record<string, unknown>;

/** The struct as one range of vLLM versions declares it. */
export interface StructLayout {
  /** Oldest and newest version with exactly these fields. */
  readonly from: VllmVersion;
  readonly to: VllmVersion;
  readonly fields: readonly AnyField[];
  /** Index of each layout field in the full table. */
  readonly positions: readonly number[];
  /** Array structs: minimum decodable length (index of the last required field + 1). */
  readonly minLength: number;
  /** Full-table indices of fields this layout lacks that sit between its fields (array structs). */
  readonly inserted: readonly number[];
  /** Full-table indices of fields this layout lacks that come after all of its fields (array structs). */
  readonly appended: readonly number[];
}

interface LayoutRuntime extends StructLayout {
  compiled: CompiledDecoder | undefined;
}

export class StructCodec<V, I> implements Codec<V, I> {
  readonly label: string;
  readonly nullable = false;
  /** The fields of the pinned revision's struct (VLLM_REVISION), in wire order. */
  readonly fields: readonly AnyField[];
  /** Every field any supported version has, in wire order (the table as declared). */
  readonly allFields: readonly AnyField[];
  /** Array structs: minimum decodable length of the pinned revision's layout. */
  readonly minLength: number;
  /** Distinct layouts over VLLM_VERSIONS, oldest first (array layouts strictly grow in length). */
  readonly layouts: readonly StructLayout[];
  private readonly byWire = new Map<string, number>();
  private readonly sinceRank: Uint8Array;
  private readonly layoutOfRank: LayoutRuntime[];
  private readonly runtimeLayouts: LayoutRuntime[];
  private readonly pinned: LayoutRuntime;
  /** Specialized decoder for array structs generated from the field table (see compileArrayDecoder). */
  private readonly compiled: CompiledDecoder | undefined;
  /**
   * Map structs: per sender era (the newest `since` rank among the keys it wrote), the object builder of
   * that era's key set (see compileMapBuilder); built on first use, null where code generation is off.
   */
  private readonly mapBuilders: (MapBuilder | null | undefined)[] = [];

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
    this.allFields = fields;
    this.sinceRank = Uint8Array.from(fields, (f) => (f.since === undefined ? 0 : versionRank(f.since)));
    fields.forEach((f, i) => {
      this.byWire.set(f.wire, i);
    });
    this.runtimeLayouts = buildLayouts(name, kind, fields);
    this.layouts = this.runtimeLayouts;
    this.layoutOfRank = VLLM_VERSIONS.map(
      (v) =>
        this.runtimeLayouts.find(
          (l) => versionRank(l.from) <= versionRank(v) && versionRank(v) <= versionRank(l.to),
        )!,
    );
    this.pinned = this.layoutOfRank[versionRank(PINNED_VERSION)]!;
    this.fields = this.pinned.fields;
    this.minLength = this.pinned.minLength;
    this.compiled = kind === "array" ? compileDispatcher(name, this.runtimeLayouts, this.pinned) : undefined;
  }

  /** The fields a vLLM version's struct declares, in wire order. */
  fieldsAt(version: VllmVersion): readonly AnyField[] {
    return this.layoutAt(version).fields;
  }

  layoutAt(version: VllmVersion): StructLayout {
    return this.layoutOfRank[versionRank(version)]!;
  }

  /** The layout an array of `n` elements was written in (see the header comment). */
  layoutForLength(n: number): StructLayout {
    return pickByLength(this.runtimeLayouts, n, this.pinned);
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
    const layout = this.layoutOfRank[versionRank(w.targetVersion)]!;
    const obj = value as Record<string, unknown>;
    if (this.kind === "sparse") this.encodeSparse(w, obj, layout);
    else if (this.kind === "array") this.encodeArray(w, obj, layout, w.targetVersion);
    else this.encodeMap(w, obj, layout);
  }

  private decodeArray(r: Reader): Record<string, unknown> {
    if (!r.isArray()) fail(`expected ${this.name} as an array, got ${describeNext(r)}`);
    const n = r.array();
    if (this.compiled !== undefined) return this.compiled(r, n);
    const layout = pickByLength(this.runtimeLayouts, n, this.pinned);
    if (n < layout.minLength) fail(`expected array of at least length ${layout.minLength}, got ${n}`);
    const fields = layout.fields;
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
    const fields = this.allFields;
    const values = new Array<unknown>(fields.length);
    const seen = new Uint8Array(fields.length);
    const sinceRank = this.sinceRank;
    // The sender is at least as new as the newest field it wrote.
    let era = 0;
    let expect = 0;
    for (let k = 0; k < n; k++) {
      if (!r.isStr()) fail(`expected str keys in ${this.name}, got ${describeNext(r)}`);
      // Keys usually come in declaration order: read the key as the expected slot's name (no new string
      // when it is), then fall back to the map lookup.
      const expected = expect < fields.length ? fields[expect]!.wire : undefined;
      const key = expected === undefined ? r.str() : r.knownStr(expected);
      const idx = key === expected ? expect : this.byWire.get(key);
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
      if (sinceRank[idx]! > era) era = sinceRank[idx]!;
    }
    // A map struct has every field its sender's era knows: the ones not written take their defaults (a
    // sparse struct has exactly the keys written).
    if (this.kind === "map") {
      for (let i = 0; i < fields.length; i++) {
        if (seen[i] === 1 || sinceRank[i]! > era) continue;
        const f = fields[i]!;
        if (f.required) throw withSegment(new WireFault(`missing required field "${f.wire}"`), `.${f.wire}`);
        values[i] = f.default!();
        seen[i] = 1;
      }
      // One object literal of a fixed shape per era; key by key below, each key is a megamorphic store and
      // a hidden-class transition.
      const build = this.mapBuilder(era);
      if (build !== null) return build(values);
    }
    const out: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i++) if (seen[i] === 1) out[fields[i]!.key] = values[i];
    return out;
  }

  /** The builder for a map sent by a sender of `era` (see mapBuilders), or null without code generation. */
  private mapBuilder(era: number): MapBuilder | null {
    let build = this.mapBuilders[era];
    if (build === undefined) {
      const keys = this.allFields.flatMap((f, i) => (this.sinceRank[i]! <= era ? [[f.key, i] as const] : []));
      build = compileMapBuilder(`${this.name}_${era}`, keys);
      this.mapBuilders[era] = build;
    }
    return build;
  }

  private encodeArray(
    w: Writer,
    obj: Record<string, unknown>,
    layout: LayoutRuntime,
    target: VllmVersion,
  ): void {
    const fields = this.allFields;
    for (const i of layout.inserted) {
      const f = fields[i]!;
      const v = obj[f.key];
      if (v !== undefined && !isDefaultValue(f, v)) {
        fail(
          `${this.name}.${f.wire} (vLLM ${VLLM_VERSION_INFO[f.since!].label} and later) cannot be sent in the ${VLLM_VERSION_INFO[target].label} layout, which has no slot for it`,
        );
      }
    }
    // Fields newer than the target that come after all of its fields are written when set: an older
    // msgspec decoder skips extra trailing elements (mpack_decode_struct_array_inner).
    let last = -1;
    const appended = layout.appended;
    for (let j = appended.length - 1; j >= 0; j--) {
      if (obj[fields[appended[j]!]!.key] !== undefined) {
        last = j;
        break;
      }
    }
    w.arrayHeader(layout.fields.length + last + 1);
    const positions = layout.positions;
    for (let j = 0; j < positions.length; j++) this.encodeFieldValue(w, fields[positions[j]!]!, obj);
    for (let j = 0; j <= last; j++) this.encodeFieldValue(w, fields[appended[j]!]!, obj);
  }

  private encodeMap(w: Writer, obj: Record<string, unknown>, layout: LayoutRuntime): void {
    const fields = this.allFields;
    const write = this.mapKeysToWrite(obj, layout);
    w.mapHeader(write.length);
    for (const i of write) {
      const f = fields[i]!;
      try {
        w.str(f.wire);
      } catch (err) {
        throw withSegment(err, `.${f.wire}`);
      }
      this.encodeFieldValue(w, f, obj);
    }
  }

  /** Table indices a map struct writes for `layout`: all of its fields, plus newer ones that carry a value. */
  private mapKeysToWrite(obj: Record<string, unknown>, layout: LayoutRuntime): number[] {
    const fields = this.allFields;
    if (layout.fields.length === fields.length) return layout.positions as number[];
    const out: number[] = [];
    const inLayout = new Set(layout.positions);
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (inLayout.has(i)) out.push(i);
      else {
        // A newer key is ignored by an older decoder; written only when it says something.
        const v = obj[f.key];
        if (v !== undefined && !isDefaultValue(f, v)) out.push(i);
      }
    }
    return out;
  }

  private encodeFieldValue(w: Writer, f: AnyField, obj: Record<string, unknown>): void {
    try {
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

  private encodeSparse(w: Writer, obj: Record<string, unknown>, layout: LayoutRuntime): void {
    const fields = this.allFields;
    // Header width follows the declared field count of the target's struct (msgspec
    // mpack_encode_struct_object), the count the keys written.
    const wide = layout.fields.length >= 16;
    const at = wide ? w.map16Placeholder() : w.fixmapPlaceholder();
    const sinceRank = this.sinceRank;
    const targetRank = versionRank(layout.to);
    let count = 0;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      const v = obj[f.key];
      if (v === undefined) continue;
      // A key the target's struct lacks: an older decoder ignores it, so it is sent only when set.
      if (sinceRank[i]! > targetRank && isDefaultValue(f, v)) continue;
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
    for (const f of this.allFields) {
      const v = view[f.key];
      out[f.key] = v !== undefined ? v : f.default !== undefined ? f.default() : null;
    }
    return out;
  }
}

/** The value is the field's default (None, 0, False, "", an empty list/dict): it carries nothing. */
function isDefaultValue(f: AnyField, v: unknown): boolean {
  if (f.default === undefined) return v === null;
  const d = f.default();
  if (v === d) return true;
  if (Array.isArray(v) && Array.isArray(d)) return v.length === 0 && d.length === 0;
  if (v instanceof Map) return v.size === 0 && (d === null || (typeof d === "object" && isEmptyObject(d)));
  if (isEmptyObject(v) && isEmptyObject(d)) return true;
  return false;
}

function isEmptyObject(v: unknown): boolean {
  return (
    typeof v === "object" &&
    v !== null &&
    Object.getPrototypeOf(v) === Object.prototype &&
    Object.keys(v).length === 0
  );
}

function buildLayouts(name: string, kind: StructKind, fields: readonly AnyField[]): LayoutRuntime[] {
  const out: LayoutRuntime[] = [];
  for (const v of VLLM_VERSIONS) {
    const positions: number[] = [];
    fields.forEach((f, i) => {
      if (versionHas(v, f.since)) positions.push(i);
    });
    const prev = out[out.length - 1];
    if (prev !== undefined && prev.positions.length === positions.length) {
      (prev as { to: VllmVersion }).to = v;
      continue;
    }
    if (prev !== undefined && kind === "array" && positions.length < prev.positions.length) {
      throw new Error(`${name}: array layouts must only gain fields across versions`);
    }
    const layoutFields = positions.map((i) => fields[i]!);
    let minLength = 0;
    layoutFields.forEach((f, i) => {
      if (f.required) minLength = i + 1;
    });
    const lastPos = positions[positions.length - 1] ?? -1;
    const missing = fields.map((_, i) => i).filter((i) => !positions.includes(i));
    out.push({
      from: v,
      to: v,
      fields: layoutFields,
      positions,
      minLength,
      inserted: missing.filter((i) => i < lastPos),
      appended: missing.filter((i) => i > lastPos),
      compiled: undefined,
    });
  }
  return out;
}

/**
 * The newest layout whose field count is at most `n`. An array shorter than every layout was not
 * written by msgspec (which writes every field); it is read as the pinned struct, as msgspec reads a
 * short array (missing trailing fields take their defaults).
 */
function pickByLength<L extends StructLayout>(layouts: readonly L[], n: number, pinned: L): L {
  for (let i = layouts.length - 1; i >= 0; i--) if (layouts[i]!.fields.length <= n) return layouts[i]!;
  return pinned;
}

/** One compiled decoder per layout, behind a length dispatch (undefined if code generation is off). */
function compileDispatcher(
  name: string,
  layouts: LayoutRuntime[],
  pinned: LayoutRuntime,
): CompiledDecoder | undefined {
  for (const l of layouts) {
    l.compiled = compileArrayDecoder(`${name}_${l.from.replace(".", "_")}`, l.fields, l.minLength);
    if (l.compiled === undefined) return undefined;
  }
  if (layouts.length === 1) {
    const only = layouts[0]!;
    const decode = only.compiled!;
    const min = only.minLength;
    return (r, n) => {
      if (n < min) fail(`expected array of at least length ${min}, got ${n}`);
      return decode(r, n);
    };
  }
  return (r, n) => {
    const l = pickByLength(layouts, n, pinned);
    if (n < l.minLength) fail(`expected array of at least length ${l.minLength}, got ${n}`);
    return l.compiled!(r, n);
  };
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

type MapBuilder = (values: readonly unknown[]) => Record<string, unknown>;

/**
 * Generate `values => ({ key: values[i], ... })` for the given keys, in declaration order: the object the
 * generic loop of decodeMap builds key by key, as one literal (one hidden class per struct and era). Returns
 * null where code generation is disabled.
 */
function compileMapBuilder(name: string, keys: readonly (readonly [string, number])[]): MapBuilder | null {
  const body = keys.map(([key, i]) => `${JSON.stringify(key)}: v[${i}]`).join(", ");
  const fnName = `build${name.replace(/[^A-Za-z0-9_]/g, "")}`;
  try {
    return new Function(`return function ${fnName}(v) { return { ${body} }; };`)() as MapBuilder;
  } catch {
    return null;
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
