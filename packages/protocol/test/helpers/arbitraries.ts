// fast-check arbitraries derived from the codecs' field tables, so every struct (and every field added
// later) is covered without hand-written generators. Generated values are in "decoded form": decoding
// their encoding must give them back unchanged.
import fc from "fast-check";
import { Float64 } from "../../src/index.js";
import {
  ANY,
  type AnyCodec,
  BIG_INT,
  BOOL,
  CALL_ID,
  FLOAT,
  INT,
  INT_FLOAT_MAP,
  STR,
} from "../../src/schema/codec.js";
import { StructCodec } from "../../src/schema/struct.js";
import { TENSOR, type Tensor } from "../../src/schema/tensor.js";

const safeInt = fc.oneof(fc.integer({ min: -300, max: 70_000 }), fc.maxSafeInteger());
const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ maxLength: 300 }),
);
const key = text.filter((k) => k !== "__proto__");
const nonIntegral = fc.double().filter((x) => !Number.isInteger(x));
const integralFloat = fc
  .double()
  .filter((x) => Number.isInteger(x))
  .map((x) => new Float64(x));
const unsafeBigInt = fc.oneof(
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n - 1n }),
  fc.bigInt({ min: -(2n ** 63n), max: -(2n ** 53n) }),
);

/** Opaque values in the form the decoder produces. */
export const opaque: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    safeInt,
    nonIntegral,
    integralFloat,
    unsafeBigInt,
    text,
    fc.uint8Array({ maxLength: 40 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
    fc
      .uniqueArray(fc.tuple(safeInt, tie("value")), { minLength: 1, maxLength: 3, selector: (t) => t[0] })
      .map((e) => new Map(e)),
  ),
})).value;

const DTYPES: [string, new (b: ArrayBuffer) => Tensor["data"], number][] = [
  ["<i4", Int32Array, 4],
  ["int64", BigInt64Array, 8],
  ["<i8", BigInt64Array, 8],
  ["<f4", Float32Array, 4],
  ["float32", Float32Array, 4],
  ["<f8", Float64Array, 8],
  ["|b1", Uint8Array, 1],
  ["uint8", Uint8Array, 1],
  ["bfloat16", Uint16Array, 2],
  ["<u4", Uint32Array, 4],
  ["<c8", Uint8Array, 8], // unknown dtype → raw bytes
];

export const tensor: fc.Arbitrary<Tensor> = fc
  .tuple(fc.constantFrom(...DTYPES), fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }))
  .chain(([[dtype, ctor, size], shape]) => {
    const count = shape.reduce((a, b) => a * b, 1);
    return fc.uint8Array({ minLength: count * size, maxLength: count * size }).map((bytes) => {
      const copy = new ArrayBuffer(bytes.byteLength);
      new Uint8Array(copy).set(bytes);
      return { dtype, shape, data: new ctor(copy) };
    });
  });

const nested: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  n: fc.oneof(
    { depthSize: "small" },
    tensor,
    safeInt,
    nonIntegral,
    integralFloat,
    fc.array(tie("n"), { maxLength: 3 }),
  ),
})).n;

const cache = new Map<AnyCodec, fc.Arbitrary<unknown>>();

/** Arbitrary for any codec of the package (struct tables, lists, maps, unions, enums, tensors). */
export function arbitraryFor(codec: AnyCodec): fc.Arbitrary<unknown> {
  const hit = cache.get(codec);
  if (hit !== undefined) return hit;
  const arb = build(codec);
  cache.set(codec, arb);
  return arb;
}

function build(codec: AnyCodec): fc.Arbitrary<unknown> {
  if (codec === INT) return safeInt;
  if (codec === BIG_INT) return fc.oneof(safeInt, unsafeBigInt);
  if (codec === CALL_ID) return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n });
  if (codec === FLOAT) return fc.double();
  if (codec === STR) return text;
  if (codec === BOOL) return fc.boolean();
  if (codec === ANY) return opaque;
  if (codec === TENSOR) return tensor;
  if (codec === INT_FLOAT_MAP) {
    return fc
      .uniqueArray(fc.tuple(safeInt, fc.double()), { maxLength: 4, selector: (t) => t[0] })
      .map((e) => new Map(e));
  }
  if (codec.label === "NestedTensors") return nested;
  if (codec.label === "dict") return fc.dictionary(key, opaque, { maxKeys: 3 });
  if (codec.members !== undefined) return fc.constantFrom(...codec.members);
  if (codec.nullable && codec.inner !== undefined)
    return fc.option(arbitraryFor(codec.inner), { nil: null, freq: 3 });
  if (codec.element !== undefined) {
    const unique = codec.label.startsWith("set[");
    return unique
      ? fc.uniqueArray(arbitraryFor(codec.element), { maxLength: 5 })
      : fc.array(arbitraryFor(codec.element), { maxLength: 5 });
  }
  if (codec.values !== undefined) return fc.dictionary(key, arbitraryFor(codec.values), { maxKeys: 4 });
  if (codec.alternatives !== undefined) return fc.oneof(...codec.alternatives.map(arbitraryFor));
  if (codec instanceof StructCodec) {
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const f of codec.fields) record[f.key] = arbitraryFor(f.codec);
    const base = codec.kind === "sparse" ? fc.record(record, { requiredKeys: [] }) : fc.record(record);
    const validate = codec.validate;
    return validate === undefined
      ? base
      : base.filter((v) => validate(codec.resolve(v as Record<string, unknown>)) === undefined);
  }
  throw new Error(`no arbitrary for codec ${codec.label}`);
}
