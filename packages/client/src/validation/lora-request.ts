// LoRARequest (vllm/lora/request.py, an array_like msgspec Struct): field types, then __post_init__.
import { type Checker, MISSING } from "./checker.js";
import { bool, int, nullable, str, structObject } from "./msgspec-types.js";
import { untypedDict } from "./structured-outputs.js";

export function verifyLoRARequest(c: Checker, at: string, value: unknown): void {
  const lora = structObject(c, at, value, "array");
  const f = (key: string) => `${at}.${key}`;
  for (const key of ["loraName", "loraIntId"]) {
    if (lora[key] === undefined)
      c.fail("msgspec.required", f(key), MISSING, `Object missing required field \`${key}\``);
  }
  str(c, f("loraName"), lora.loraName);
  const id = int(c, f("loraIntId"), lora.loraIntId);
  const path = lora.loraPath === undefined ? "" : str(c, f("loraPath"), lora.loraPath);
  nullable(lora.baseModelName, (v) => str(c, f("baseModelName"), v));
  nullable(lora.tensorizerConfigDict, (v) => untypedDict(c, f("tensorizerConfigDict"), v));
  if (lora.loadInplace !== undefined) bool(c, f("loadInplace"), lora.loadInplace);
  if (lora.is3dLoraWeight !== undefined) bool(c, f("is3dLoraWeight"), lora.is3dLoraWeight);
  // __post_init__: ValueError for the id, then an assert on the path.
  c.require(id >= 1n, "LoRARequest.lora_int_id.min", f("loraIntId"), id);
  c.require(path !== "", "LoRARequest.lora_path.empty", f("loraPath"), path);
}
