// vllm/lora/request.py LoRARequest: an array_like msgspec Struct; __post_init__ runs on decode.
import { decodeArrayStruct, decodeBool, decodeInt, decodeStr, type FieldSpec, nullable } from "./msgspec.js";
import { PythonError, raisedIn } from "./python-errors.js";
import { decodeUntypedDict } from "./sampling-params.js";

const FIELDS: FieldSpec[] = [
  { name: "lora_name", decode: decodeStr },
  { name: "lora_int_id", decode: decodeInt },
  { name: "lora_path", decode: decodeStr, default: () => "" },
  { name: "base_model_name", decode: nullable(decodeStr), default: () => null },
  { name: "tensorizer_config_dict", decode: nullable(decodeUntypedDict), default: () => null },
  { name: "load_inplace", decode: decodeBool, default: () => false },
  { name: "is_3d_lora_weight", decode: decodeBool, default: () => false },
];

function loraRequestPostInit(self: Record<string, unknown>, path: string): void {
  if ((self.lora_int_id as bigint) < 1n)
    throw raisedIn(path, "ValueError", `id must be > 0, got ${self.lora_int_id}`);
  // `assert self.lora_path, "lora_path cannot be empty"`: an AssertionError, which msgspec does not wrap.
  if (!self.lora_path) throw new PythonError("AssertionError", "lora_path cannot be empty");
}

export function decodeLoRARequest(v: unknown, path: string): Record<string, unknown> {
  const self = decodeArrayStruct(v, path, FIELDS);
  loraRequestPostInit(self, path);
  return self;
}
