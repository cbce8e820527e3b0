// numpy arrays / torch tensors: `[dtype, shape, data]` where data is ext 3 (inline raw bytes) or the
// index of an aux frame (frame 0 = the main buffer). Decoded data is a typed array over the received
// bytes (no copy) when the offset is aligned for the element type; otherwise the bytes are copied.
import { fail, withSegment } from "../msgpack/fault.js";
import type { Reader } from "../msgpack/reader.js";
import type { Writer } from "../msgpack/writer.js";
import type { Codec } from "./codec.js";
import { describeValue } from "./codec.js";

export type TensorData =
  | Uint8Array
  | Int8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

export interface Tensor {
  /** numpy `dtype.str` ("<i4", "<f4", "|b1") or torch dtype name ("int64", "bfloat16"). */
  dtype: string;
  shape: number[];
  /** Elements (typed array matching dtype; bfloat16/float16 as raw Uint16Array; unknown dtypes as bytes). */
  data: TensorData;
}

type TypedCtor = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): TensorData;
  readonly BYTES_PER_ELEMENT: number;
};

const DTYPES = new Map<string, TypedCtor>();
function add(ctor: TypedCtor, ...names: string[]): void {
  for (const n of names) DTYPES.set(n, ctor);
}
add(Int8Array as TypedCtor, "|i1", "int8");
add(Uint8Array as TypedCtor, "|u1", "uint8", "|b1", "bool");
add(Int16Array as TypedCtor, "<i2", "int16");
add(Uint16Array as TypedCtor, "<u2", "uint16", "bfloat16", "float16", "<f2");
add(Int32Array as TypedCtor, "<i4", "int32");
add(Uint32Array as TypedCtor, "<u4", "uint32");
add(BigInt64Array as TypedCtor, "<i8", "int64");
add(BigUint64Array as TypedCtor, "<u8", "uint64");
add(Float32Array as TypedCtor, "<f4", "float32");
add(Float64Array as TypedCtor, "<f8", "float64");

export const RAW_VIEW_EXT = 3;

function viewAs(bytes: Uint8Array, dtype: string, shape: readonly number[]): TensorData {
  const ctor = DTYPES.get(dtype);
  let count = 1;
  for (const d of shape) count *= d;
  if (ctor === undefined) return bytes;
  const size = ctor.BYTES_PER_ELEMENT;
  if (count * size !== bytes.byteLength) {
    fail(
      `tensor data has ${bytes.byteLength} bytes, but dtype ${dtype} with shape [${shape.join(", ")}] needs ${count * size}`,
    );
  }
  if (ctor === (Uint8Array as TypedCtor)) return bytes;
  if (bytes.byteOffset % size === 0) return new ctor(bytes.buffer, bytes.byteOffset, count);
  // Copy into a fresh, offset-0 buffer. Not `bytes.slice()`: on a Node Buffer (what zeromq.js delivers)
  // `slice` is a view, and `copy.buffer` would then be the whole frame (or the pooled slab).
  const copy = new Uint8Array(bytes);
  return new ctor(copy.buffer, 0, count);
}

function decodeTensor(r: Reader): Tensor {
  const n = r.array();
  if (n !== 3) fail(`expected a tensor [dtype, shape, data] (3 elements), got ${n} elements`);
  let seg = "[0]";
  try {
    const dtype = r.str();
    seg = "[1]";
    const rank = r.array();
    const shape = new Array<number>(rank);
    for (let i = 0; i < rank; i++) {
      const d = r.int();
      if (d < 0) fail(`negative dimension ${d}`);
      shape[i] = d;
    }
    seg = "[2]";
    let bytes: Uint8Array;
    if (r.isInt()) {
      const index = r.int();
      const frame = r.auxFrame(index);
      if (frame === undefined) {
        fail(`aux frame index ${index} out of range (message has ${r.frames.length - 1} aux frame(s))`);
      }
      bytes = frame;
    } else if (r.isExt()) {
      const ext = r.ext();
      if (ext.type !== RAW_VIEW_EXT) fail(`unsupported ext type ${ext.type} for tensor data (expected 3)`);
      bytes = ext.data;
    } else {
      return fail("tensor data must be ext 3 or an aux frame index");
    }
    return { dtype, shape, data: viewAs(bytes, dtype, shape) };
  } catch (err) {
    throw withSegment(err, seg);
  }
}

function encodeTensor(w: Writer, t: Tensor): void {
  if (typeof t !== "object" || t === null)
    fail(`expected a tensor {dtype, shape, data}, got ${describeValue(t)}`);
  const { dtype, shape, data } = t;
  if (typeof dtype !== "string") fail("tensor dtype must be a string");
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    fail("tensor shape must be an array of non-negative integers");
  }
  if (!ArrayBuffer.isView(data)) fail("tensor data must be a typed array");
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const ctor = DTYPES.get(dtype);
  if (ctor !== undefined) {
    let count = 1;
    for (const d of shape) count *= d;
    if (count * ctor.BYTES_PER_ELEMENT !== bytes.byteLength) {
      fail(
        `tensor data has ${bytes.byteLength} bytes, dtype ${dtype} with shape [${shape.join(", ")}] needs ${count * ctor.BYTES_PER_ELEMENT}`,
      );
    }
  }
  w.arrayHeader(3);
  w.str(dtype);
  w.arrayHeader(shape.length);
  for (const d of shape) w.int(d);
  if (shape.length === 0 || bytes.byteLength < w.auxThreshold) {
    w.ext(RAW_VIEW_EXT, bytes);
  } else {
    w.aux.push(bytes);
    w.int(w.aux.length);
  }
}

export const TENSOR: Codec<Tensor> = {
  label: "tensor",
  nullable: false,
  decode: decodeTensor,
  encode: encodeTensor,
};

export function isTensorLike(v: unknown): v is Tensor {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as Tensor).dtype === "string" &&
    Array.isArray((v as Tensor).shape) &&
    ArrayBuffer.isView((v as Tensor).data)
  );
}
