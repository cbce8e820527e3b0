// vllm/v1/serial_utils.py MsgpackDecoder.dec_hook for the custom types of a request: torch.Tensor
// (_decode_tensor) and MultiModalKwargsItem (_decode_mm_item → _decode_mm_field_elem →
// _decode_nested_tensors / _decode_nested_slices, rebuilding fields with vllm/multimodal/inputs.py's
// MultiModalFieldConfig factories). msgspec hands dec_hook the value decoded as `Any`.
import { Float64, MsgpackExt } from "@vllm-engine-core/protocol";
import { decodeAny, isInt, mapEntries, typeName } from "./msgspec.js";
import { PythonError, raisedIn } from "./python-errors.js";

/** getattr(torch, name) that is a torch.dtype → itemsize in bytes (torch 2.x names and aliases). */
const TORCH_DTYPES: Record<string, number> = {
  float32: 4,
  float: 4,
  float64: 8,
  double: 8,
  float16: 2,
  half: 2,
  bfloat16: 2,
  complex32: 4,
  chalf: 4,
  complex64: 8,
  cfloat: 8,
  complex128: 16,
  cdouble: 16,
  uint8: 1,
  int8: 1,
  int16: 2,
  short: 2,
  int32: 4,
  int: 4,
  int64: 8,
  long: 8,
  uint16: 2,
  uint32: 4,
  uint64: 8,
  bool: 1,
  float8_e4m3fn: 1,
  float8_e4m3fnuz: 1,
  float8_e5m2: 1,
  float8_e5m2fnuz: 1,
  float8_e8m0fnu: 1,
};

function isDict(v: unknown): boolean {
  return (
    v instanceof Map ||
    (typeof v === "object" &&
      v !== null &&
      !Array.isArray(v) &&
      !(v instanceof Float64) &&
      !(v instanceof Uint8Array) &&
      !(v instanceof MsgpackExt))
  );
}

/** _decode_tensor: `dtype, shape, data = arr`, then torch.frombuffer(...).view(dtype).view(shape). */
export function decodeTensor(obj: unknown, path: string, auxBuffers: readonly Uint8Array[]): void {
  decodeAny(obj, path);
  if (!Array.isArray(obj))
    throw raisedIn(path, "TypeError", `cannot unpack non-iterable ${typeName(obj)} object`);
  if (obj.length !== 3) {
    throw raisedIn(
      path,
      "ValueError",
      obj.length < 3
        ? `not enough values to unpack (expected 3, got ${obj.length})`
        : "too many values to unpack (expected 3)",
    );
  }
  const [dtype, shape, data] = obj;
  if (isDict(data))
    throw new PythonError("AssertionError", "Received OOB tensor but tensor provider is not set");
  let buffer: Uint8Array;
  if (isInt(data) || typeof data === "boolean") {
    // self.aux_buffers[data]: Python indexing of the message's frames (frame 0 is the main buffer).
    const n = auxBuffers.length;
    const i = Number(data);
    const frame = auxBuffers[i < 0 ? n + i : i];
    if (frame === undefined) throw raisedIn(path, "IndexError", "list index out of range");
    buffer = frame;
  } else if (data instanceof MsgpackExt) {
    buffer = data.data;
  } else if (data instanceof Uint8Array) {
    buffer = data;
  } else {
    throw raisedIn(path, "TypeError", `memoryview: a bytes-like object is required, not '${typeName(data)}'`);
  }
  if (typeof dtype !== "string") throw raisedIn(path, "TypeError", "attribute name must be string");
  const itemsize = Object.hasOwn(TORCH_DTYPES, dtype) ? TORCH_DTYPES[dtype]! : undefined;
  if (itemsize === undefined)
    throw new PythonError("AttributeError", `module 'torch' has no attribute '${dtype}'`);
  if (!Array.isArray(shape) || !shape.every(isInt)) {
    throw new PythonError("RuntimeError", `shape must be a list of ints, got ${typeName(shape)}`);
  }
  const dims = shape.map(Number);
  if (buffer.byteLength === 0) {
    // torch.frombuffer rejects empty buffers: `assert 0 in shape`, then torch.empty(shape).
    if (!dims.includes(0)) throw new PythonError("AssertionError", "");
    if (dims.some((d) => d < 0))
      throw new PythonError("RuntimeError", `Trying to create tensor with negative dimension`);
    return;
  }
  if (buffer.byteLength % itemsize !== 0) {
    throw new PythonError(
      "RuntimeError",
      `self.size(-1) must be divisible by ${itemsize} to view Byte as ${dtype} (different element sizes)`,
    );
  }
  // .view(shape): one dimension may be -1 (inferred); the element count must match.
  const numel = buffer.byteLength / itemsize;
  const inferred = dims.filter((d) => d === -1).length;
  const known = dims.filter((d) => d !== -1);
  const product = known.reduce((a, d) => a * d, 1);
  const ok =
    inferred <= 1 &&
    known.every((d) => d >= 0) &&
    (inferred === 0 ? product === numel : product > 0 && numel % product === 0);
  if (!ok)
    throw new PythonError(
      "RuntimeError",
      `shape '[${dims.join(", ")}]' is invalid for input of size ${numel}`,
    );
}

/** _decode_nested_tensors */
function decodeNestedTensors(obj: unknown, path: string, aux: readonly Uint8Array[]): void {
  if (isInt(obj) || typeof obj === "boolean" || typeof obj === "number" || obj instanceof Float64) return; // int | float
  if (!Array.isArray(obj))
    throw raisedIn(path, "TypeError", `Unexpected NestedTensors contents: ${typeName(obj)}`);
  if (obj.length > 0 && typeof obj[0] === "string") {
    decodeTensor(obj, path, aux);
    return;
  }
  obj.forEach((x, i) => {
    decodeNestedTensors(x, `${path}[${i}]`, aux);
  });
}

/** _decode_nested_slices */
function decodeNestedSlices(obj: unknown, path: string): void {
  if (!Array.isArray(obj)) throw new PythonError("AssertionError", "");
  if (obj.length > 0 && !Array.isArray(obj[0])) {
    if (obj.length > 3)
      throw raisedIn(path, "TypeError", `slice expected at most 3 arguments, got ${obj.length}`);
    return;
  }
  obj.forEach((x, i) => {
    decodeNestedSlices(x, `${path}[${i}]`);
  });
}

/** MultiModalFieldConfig's factories callable as factory("", **kwargs), with their keyword parameters. */
const FACTORIES: Record<string, { required: string[]; keywords: string[] }> = {
  batched: { required: [], keywords: ["keep_on_cpu"] },
  flat: { required: ["slices"], keywords: ["slices", "dim", "keep_on_cpu"] },
  shared: { required: ["batch_size"], keywords: ["batch_size", "keep_on_cpu"] },
};

/** _decode_mm_field_elem */
function decodeMmFieldElem(obj: unknown, path: string, aux: readonly Uint8Array[]): void {
  if (!isDict(obj))
    throw raisedIn(path, "TypeError", `${typeName(obj)} indices must be integers or slices, not str`);
  const entries = new Map(mapEntries(obj, path));
  if (!entries.has("data")) throw new PythonError("KeyError", "'data'");
  if (entries.get("data") !== null) decodeNestedTensors(entries.get("data"), path, aux);
  if (!entries.has("field")) throw new PythonError("KeyError", "'field'");
  const field = entries.get("field");
  if (!Array.isArray(field) || field.length !== 2) {
    throw raisedIn(path, "ValueError", "cannot unpack MultiModalFieldElem.field into (factory, kwargs)");
  }
  const [name, kwargs] = field;
  if (typeof name !== "string") throw raisedIn(path, "TypeError", "attribute name must be string");
  const factory = Object.hasOwn(FACTORIES, name) ? FACTORIES[name]! : undefined;
  if (factory === undefined) {
    // Any other attribute of MultiModalFieldConfig (flat_from_sizes needs a tensor, build_elems an
    // instance) or a missing one fails before `.field` is reached.
    throw new PythonError(
      "AttributeError",
      `type object 'MultiModalFieldConfig' has no usable factory '${name}'`,
    );
  }
  if (!isDict(kwargs))
    throw raisedIn(path, "TypeError", `argument after ** must be a mapping, not ${typeName(kwargs)}`);
  const kw = new Map(mapEntries(kwargs, path));
  if (name === "flat") {
    if (!kw.has("slices")) throw new PythonError("KeyError", "'slices'");
    decodeNestedSlices(kw.get("slices"), path);
  }
  for (const k of kw.keys()) {
    if (typeof k !== "string") throw raisedIn(path, "TypeError", "keywords must be strings");
    if (!factory.keywords.includes(k)) {
      throw raisedIn(
        path,
        "TypeError",
        `MultiModalFieldConfig.${name}() got an unexpected keyword argument '${k}'`,
      );
    }
  }
  for (const k of factory.required) {
    if (!kw.has(k))
      throw raisedIn(
        path,
        "TypeError",
        `MultiModalFieldConfig.${name}() missing 1 required positional argument: '${k}'`,
      );
  }
  // MultiModalFieldElem(**obj)
  for (const k of entries.keys()) {
    if (typeof k !== "string") throw raisedIn(path, "TypeError", "keywords must be strings");
    if (k !== "data" && k !== "field") {
      throw raisedIn(
        path,
        "TypeError",
        `MultiModalFieldElem.__init__() got an unexpected keyword argument '${k}'`,
      );
    }
  }
}

/** _decode_mm_item: `{key: _decode_mm_field_elem(elem) for key, elem in obj.items()}`. */
export function decodeMmItem(obj: unknown, path: string, aux: readonly Uint8Array[]): void {
  decodeAny(obj, path);
  if (!isDict(obj))
    throw raisedIn(path, "AttributeError", `'${typeName(obj)}' object has no attribute 'items'`);
  for (const [key, elem] of mapEntries(obj, path)) decodeMmFieldElem(elem, `${path}[${String(key)}]`, aux);
}
