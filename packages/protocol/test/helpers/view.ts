// Compare a decoded TS value against a vector's JSON `decoded` view, guided by the codec's field table
// (wire names, element/value codecs). Views come in several shapes (positional arrays, named maps,
// wrapper objects, derived logprob "positions"); unknown view keys fail unless the vector is post-snapshot.
import { expect } from "vitest";
import { Float64, MsgpackExt } from "../../src/index.js";
import { type AnyCodec, CALL_ID, FLOAT, INT_FLOAT_MAP } from "../../src/schema/codec.js";
import { StructCodec } from "../../src/schema/struct.js";
import { TENSOR, type Tensor } from "../../src/schema/tensor.js";
import { EngineCoreOutputCodec } from "../../src/structs/output.js";
import { toHex } from "./vectors.js";

export interface ViewContext {
  /** All frames of the message (frame 0 = main buffer) for aux-index tensor data. */
  frames: readonly Uint8Array[];
  /** Post-snapshot vector: view keys/elements unknown to the pinned schema are allowed (the decoder ignores them). */
  postSnapshot: boolean;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isObj = (v: unknown): v is Record<string, Json> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function bytesOf(t: Tensor): Uint8Array {
  return new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

function num(x: number | bigint): number {
  return typeof x === "bigint" ? Number(x) : x;
}

/** Strip wrapper objects such as {"EngineCoreRequest": [...]} or {"EngineCoreOutputs(prefix)": {...}}. */
export function unwrap(view: Json, structName: string): Json {
  if (isObj(view)) {
    const keys = Object.keys(view);
    if (keys.length === 1 && keys[0]!.startsWith(structName)) return view[keys[0]!]!;
  }
  return view;
}

export function matchView(
  codec: AnyCodec,
  actual: unknown,
  expected: Json,
  ctx: ViewContext,
  path: string,
): void {
  if (expected === null) {
    expect(actual ?? null, path).toBeNull();
    return;
  }
  if (codec.nullable && codec.inner !== undefined) {
    matchView(codec.inner, actual, expected, ctx, path);
    return;
  }
  if (codec === TENSOR || codec.label === "tensor") {
    matchTensor(actual as Tensor, expected, ctx, path);
    return;
  }
  if (codec.label === "NestedTensors") {
    if (Array.isArray(expected) && typeof expected[0] === "string")
      matchTensor(actual as Tensor, expected, ctx, path);
    else if (Array.isArray(expected)) {
      expect(Array.isArray(actual), path).toBe(true);
      for (let i = 0; i < expected.length; i++) {
        matchView(codec, (actual as unknown[])[i], expected[i]!, ctx, `${path}[${i}]`);
      }
    } else matchOpaque(actual, expected, path);
    return;
  }
  if (codec instanceof StructCodec) {
    matchStruct(codec, actual as Record<string, unknown>, expected, ctx, path);
    return;
  }
  if (codec === CALL_ID) {
    expect(actual, path).toBe(BigInt(expected as number | string));
    return;
  }
  if (codec === FLOAT) {
    expect(typeof actual, path).toBe("number");
    const e = expected as number;
    if (actual !== e) expect(actual, path).toBe(Math.fround(e));
    return;
  }
  if (codec === INT_FLOAT_MAP) {
    expect(actual instanceof Map, path).toBe(true);
    const m = actual as Map<number, number>;
    expect([...m.keys()].map(String).sort(), path).toEqual(Object.keys(expected as object).sort());
    for (const [k, v] of Object.entries(expected as object))
      expect(m.get(Number(k)), `${path}[${k}]`).toBe(v);
    return;
  }
  if (codec.element !== undefined) {
    expect(Array.isArray(expected), `${path}: view is not an array`).toBe(true);
    expect(Array.isArray(actual), path).toBe(true);
    const a = actual as unknown[];
    expect(a.length, `${path}.length`).toBe((expected as Json[]).length);
    const items = expected as Json[];
    for (let i = 0; i < items.length; i++) matchView(codec.element, a[i], items[i]!, ctx, `${path}[${i}]`);
    return;
  }
  if (codec.values !== undefined) {
    expect(isObj(expected), `${path}: view is not an object`).toBe(true);
    const a = actual as Record<string, unknown>;
    expect(Object.keys(a).sort(), path).toEqual(Object.keys(expected as object).sort());
    for (const [k, e] of Object.entries(expected as Record<string, Json>))
      matchView(codec.values, a[k], e, ctx, `${path}.${k}`);
    return;
  }
  if (codec.alternatives !== undefined) {
    const alt = typeof actual === "string" ? codec.alternatives[0]! : codec.alternatives[1]!;
    matchView(alt, actual, expected, ctx, path);
    return;
  }
  if (codec.label === "Any" || codec.label === "dict") {
    matchOpaque(actual, expected, path);
    return;
  }
  // int, str, bool, enums, literals
  expect(actual, path).toEqual(expected);
}

function matchTensor(actual: Tensor, expected: Json, ctx: ViewContext, path: string): void {
  expect(
    Array.isArray(expected) && expected.length === 3,
    `${path}: tensor view must be [dtype, shape, data]`,
  ).toBe(true);
  const [dtype, shape, data] = expected as [string, number[], Json];
  expect(actual.dtype, `${path}.dtype`).toBe(dtype);
  expect(actual.shape, `${path}.shape`).toEqual(shape);
  const bytes = bytesOf(actual);
  if (typeof data === "number") {
    const frame = ctx.frames[data];
    expect(frame, `${path}: aux frame ${data} exists`).toBeDefined();
    expect(toHex(bytes), `${path}.data (aux ${data})`).toBe(toHex(frame!));
  } else if (isObj(data) && data.ext === 3 && typeof data.hex === "string") {
    expect(toHex(bytes), `${path}.data`).toBe(data.hex);
  } else if (isObj(data) && data.ext === 3 && Array.isArray(data.bytes_le_f32)) {
    expect([...new Float32Array(bytes.slice().buffer)], `${path}.data`).toEqual(data.bytes_le_f32);
  } else {
    throw new Error(`${path}: unknown tensor data view ${JSON.stringify(data)}`);
  }
}

/** Expand a LogprobsLists/LogprobsTensors value into the vectors' derived per-position view. */
function logprobPositions(
  lp: Record<string, unknown>,
): { token_id: number; logprob: number; rank: number }[][] {
  const fields = Object.values(lp) as [Tensor, Tensor, Tensor, unknown];
  const [ids, logprobs, ranks] = fields;
  const [rows, cols] = ids.shape as [number, number];
  const out = [];
  for (let p = 0; p < rows; p++) {
    const row = [];
    for (let j = 0; j < cols; j++) {
      row.push({
        token_id: num(ids.data[p * cols + j]!),
        logprob: num(logprobs.data[p * cols + j]!),
        rank: j === 0 ? num(ranks.data[p]!) : j,
      });
    }
    out.push(row);
  }
  return out;
}

function matchStruct(
  codec: StructCodec<unknown, unknown>,
  actual: Record<string, unknown>,
  expectedIn: Json,
  ctx: ViewContext,
  path: string,
): void {
  const expected = unwrap(expectedIn, codec.name);
  expect(typeof actual === "object" && actual !== null, `${path}: decoded ${codec.name} is an object`).toBe(
    true,
  );
  if (Array.isArray(expected)) {
    expect(codec.kind, `${path}: positional view of a map struct`).toBe("array");
    if (expected.length > codec.fields.length && !ctx.postSnapshot) {
      throw new Error(
        `${path}: view has ${expected.length} elements, ${codec.name} has ${codec.fields.length} fields`,
      );
    }
    codec.fields.forEach((f, i) => {
      if (i < expected.length) matchView(f.codec, actual[f.key], expected[i]!, ctx, `${path}.${f.wire}`);
    });
    return;
  }
  if (!isObj(expected))
    throw new Error(`${path}: unexpected view ${JSON.stringify(expected)} for ${codec.name}`);
  if (codec.kind === "sparse") {
    // Sparse view: exactly the keys that were on the wire.
    const known = Object.keys(expected).filter((k) => codec.fields.some((f) => f.wire === k));
    const unknown = Object.keys(expected).filter((k) => !known.includes(k));
    if (unknown.length > 0 && !ctx.postSnapshot)
      throw new Error(`${path}: unknown ${codec.name} keys ${unknown}`);
    const present = codec.fields.filter((f) => actual[f.key] !== undefined).map((f) => f.wire);
    expect(present.sort(), `${path}: keys present`).toEqual(known.sort());
  }
  for (const [key, e] of Object.entries(expected)) {
    const field = codec.fields.find((f) => f.wire === key);
    if (field !== undefined) {
      matchView(field.codec, actual[field.key], e, ctx, `${path}.${key}`);
      continue;
    }
    if (key === "note") continue; // prose inside a view
    if (key === "positions" && codec.name.startsWith("Logprobs")) {
      expect(logprobPositions(actual), `${path}.positions`).toEqual(e);
      continue;
    }
    if (codec.name === "EngineCoreOutputs" && isFlattenedOutputKey(key)) {
      // Views of single-output messages flatten the output's fields into the top level.
      const outputs = actual.outputs as Record<string, unknown>[];
      expect(outputs.length, `${path}: flattened view needs exactly one output`).toBe(1);
      matchFlattened(key, outputs[0]!, e, ctx, `${path}.outputs[0]`);
      continue;
    }
    if (ctx.postSnapshot && codec.kind !== "array") continue; // a post-snapshot key, ignored by the decoder
    throw new Error(`${path}: unknown view key "${key}" for ${codec.name}`);
  }
}

function isFlattenedOutputKey(key: string): boolean {
  return (
    key === "new_logprobs_rows" ||
    key === "sampled_ranks" ||
    EngineCoreOutputCodec.fields.some((f) => f.wire === key)
  );
}

function matchFlattened(
  key: string,
  output: Record<string, unknown>,
  e: Json,
  ctx: ViewContext,
  path: string,
): void {
  if (key === "new_logprobs_rows") {
    const rows = logprobPositions(output.newLogprobs as Record<string, unknown>).map((r) =>
      r.map((c) => [c.token_id, c.logprob]),
    );
    expect(rows, `${path}.new_logprobs`).toEqual(e);
    return;
  }
  if (key === "sampled_ranks") {
    const ranks = (output.newLogprobs as Record<string, Tensor>).sampledTokenRanks!;
    expect(
      [...ranks.data].map((x) => num(x as number | bigint)),
      `${path}.sampled_ranks`,
    ).toEqual(e);
    return;
  }
  const field = EngineCoreOutputCodec.fields.find((f) => f.wire === key)!;
  matchView(field.codec, output[field.key], e, ctx, `${path}.${key}`);
}

/** Opaque values: Float64 ~ number, bigint ~ number/decimal string, Uint8Array ~ {bin: hex}, Map ~ object. */
export function matchOpaque(actual: unknown, expected: Json, path: string): void {
  if (actual instanceof Float64) {
    expect(actual.value, path).toBe(expected);
  } else if (typeof actual === "bigint") {
    expect(actual, path).toBe(BigInt(expected as number | string));
  } else if (actual instanceof Uint8Array) {
    expect(isObj(expected) ? expected.bin : expected, path).toBe(toHex(actual));
  } else if (actual instanceof MsgpackExt) {
    expect({ ext: actual.type, hex: toHex(actual.data) }, path).toEqual(expected);
  } else if (Array.isArray(actual)) {
    expect(Array.isArray(expected), path).toBe(true);
    expect(actual.length, `${path}.length`).toBe((expected as Json[]).length);
    for (let i = 0; i < actual.length; i++) matchOpaque(actual[i], (expected as Json[])[i]!, `${path}[${i}]`);
  } else if (actual instanceof Map) {
    expect(isObj(expected), path).toBe(true);
    expect([...actual.keys()].map(String).sort(), path).toEqual(Object.keys(expected as object).sort());
    for (const [k, v] of actual)
      matchOpaque(v, (expected as Record<string, Json>)[String(k)]!, `${path}[${String(k)}]`);
  } else if (typeof actual === "object" && actual !== null) {
    expect(isObj(expected), path).toBe(true);
    expect(Object.keys(actual).sort(), path).toEqual(Object.keys(expected as object).sort());
    for (const [k, v] of Object.entries(actual))
      matchOpaque(v, (expected as Record<string, Json>)[k]!, `${path}.${k}`);
  } else {
    expect(actual, path).toEqual(expected);
  }
}

/**
 * Build an encoder input from a JSON view (client→engine direction). Returns undefined when the view
 * is not complete enough to rebuild the value (prose-only tensor data, prefixes).
 */
export function fromView(codec: AnyCodec, view: Json): unknown {
  if (view === null) return null;
  if (codec.nullable && codec.inner !== undefined) return fromView(codec.inner, view);
  if (codec instanceof StructCodec) {
    const obj: Record<string, unknown> = {};
    if (Array.isArray(view)) {
      if (view.length !== codec.fields.length) return undefined;
      codec.fields.forEach((f, i) => {
        obj[f.key] = fromView(f.codec, view[i]!);
      });
    } else if (isObj(view)) {
      for (const [k, v] of Object.entries(view)) {
        const f = codec.fields.find((x) => x.wire === k);
        if (f === undefined) return undefined;
        obj[f.key] = fromView(f.codec, v);
      }
    } else return undefined;
    return Object.values(obj).includes(undefined) ? undefined : obj;
  }
  if (codec === CALL_ID) return BigInt(view as number | string);
  if (codec.label === "tensor" || codec.label === "NestedTensors") {
    if (!Array.isArray(view)) return view;
    const [dtype, shape, data] = view as [string, number[], Json];
    if (!isObj(data) || typeof data.hex !== "string") return undefined;
    return { dtype, shape, data: new Uint8Array(Buffer.from(data.hex, "hex")) };
  }
  if (codec.element !== undefined) {
    const items = (view as Json[]).map((v) => fromView(codec.element!, v));
    return items.includes(undefined) ? undefined : items;
  }
  if ((codec.label === "Any" || codec.label === "dict") && hasIntegralNumber(view)) {
    // JSON cannot say whether 1 was an int or a float in an opaque position: not rebuildable.
    return undefined;
  }
  if (codec.values !== undefined && isObj(view)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(view)) out[k] = fromView(codec.values, v);
    return Object.values(out).includes(undefined) ? undefined : out;
  }
  return view;
}

/** Does a JSON value contain an integral number (ambiguous int/float in opaque positions)? */
export function hasIntegralNumber(view: Json): boolean {
  if (typeof view === "number") return Number.isInteger(view);
  if (Array.isArray(view)) return view.some(hasIntegralNumber);
  if (isObj(view)) return Object.values(view).some(hasIntegralNumber);
  return false;
}
