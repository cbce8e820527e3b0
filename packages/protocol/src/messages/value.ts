// Generic msgspec-compatible values (utility arguments/results, opaque maps).
import { ANY } from "../schema/codec.js";
import type { StructCodec } from "../schema/struct.js";
import { LoRARequestCodec, type LoRARequestInit } from "../structs/request.js";
import { decodeFrames, encodeSingle } from "./run.js";

export function encodeValue(value: unknown): Uint8Array {
  return encodeSingle(ANY, value, "value");
}

export function decodeValue(bytes: Uint8Array): unknown {
  return decodeFrames(ANY, [bytes], "value");
}

/**
 * A struct as the untyped value that stands for it on the wire: the positional array of an array_like
 * struct, the map of a map struct. Utility arguments travel untyped, and vLLM's engine turns the value back
 * into the struct with `msgspec.convert(arg, <annotation>)` (`EngineCoreProc._convert_msgspec_args`,
 * vllm/v1/engine/core.py), so the value must have the struct's wire shape, not the camelCase view. Built by
 * encoding with the struct's field table (defaults filled in, field types and `__post_init__` checks
 * applied; a ProtocolError names the field) and reading that back as a generic value.
 */
function structValue<I>(codec: StructCodec<unknown, I>, init: I): unknown {
  return decodeValue(encodeSingle(codec, init, codec.name));
}

/** A LoRARequest (array_like) as the positional array `add_lora` expects: `[lora_name, lora_int_id, ...]`. */
export function loraRequestValue(lora: LoRARequestInit): unknown[] {
  return structValue(LoRARequestCodec, lora) as unknown[];
}
