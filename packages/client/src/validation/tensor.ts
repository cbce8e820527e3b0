// torch.Tensor fields (prompt_embeds, PlaceholderRange.is_embed, multimodal nested tensors): msgspec
// hands the raw [dtype, shape, data] to MsgpackDecoder.dec_hook → _decode_tensor (vllm/v1/serial_utils.py),
// which looks the dtype up with getattr(torch, dtype) and views the bytes with that dtype and shape.
import type { Checker } from "./checker.js";
import { isPlainObject } from "./msgspec-types.js";

/** torch dtype attribute names → element size in bytes (torch 2.x; the aliases are attributes too). */
const TORCH_ITEMSIZE = new Map<string, number>([
  ["float32", 4],
  ["float", 4],
  ["float64", 8],
  ["double", 8],
  ["float16", 2],
  ["half", 2],
  ["bfloat16", 2],
  ["complex32", 4],
  ["chalf", 4],
  ["complex64", 8],
  ["cfloat", 8],
  ["complex128", 16],
  ["cdouble", 16],
  ["uint8", 1],
  ["int8", 1],
  ["int16", 2],
  ["short", 2],
  ["int32", 4],
  ["int", 4],
  ["int64", 8],
  ["long", 8],
  ["uint16", 2],
  ["uint32", 4],
  ["uint64", 8],
  ["bool", 1],
  ["float8_e4m3fn", 1],
  ["float8_e4m3fnuz", 1],
  ["float8_e5m2", 1],
  ["float8_e5m2fnuz", 1],
  ["float8_e8m0fnu", 1],
]);

export function verifyTensor(c: Checker, at: string, v: unknown): void {
  // Not even a container: `dtype, shape, data = arr` fails in vLLM as well.
  if (typeof v !== "object" || v === null) c.fail("tensor.layout", at, v);
  if (
    !isPlainObject(v) ||
    typeof v.dtype !== "string" ||
    !Array.isArray(v.shape) ||
    !ArrayBuffer.isView(v.data)
  ) {
    c.fail("client.tensor", at, v);
  }
  const shape = v.shape as unknown[];
  if (!shape.every((d) => typeof d === "number" && Number.isSafeInteger(d) && d >= 0)) {
    c.fail("client.tensor", `${at}.shape`, shape);
  }
  const itemsize = TORCH_ITEMSIZE.get(v.dtype);
  if (itemsize === undefined) {
    c.fail(
      "tensor.dtype",
      `${at}.dtype`,
      v.dtype,
      `module 'torch' has no dtype attribute ${JSON.stringify(v.dtype)}`,
    );
  }
  const numel = (shape as number[]).reduce((a, d) => a * d, 1);
  const bytes = (v.data as ArrayBufferView).byteLength;
  c.require(
    bytes === numel * itemsize,
    "tensor.size",
    `${at}.data`,
    v.data,
    `${bytes} bytes cannot be viewed as ${v.dtype} with shape [${shape.join(", ")}] (needs ${numel * itemsize})`,
  );
}
