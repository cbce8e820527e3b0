// vllm/v1/engine/__init__.py EngineCoreRequest (array_like msgspec Struct) as the engine's input
// thread decodes it: MsgpackDecoder(EngineCoreRequest).decode(data_frames) in vllm/v1/engine/core.py
// EngineCoreProc.process_input_sockets, outside any try/except. The nested multimodal dataclasses
// (vllm/multimodal/inputs.py MultiModalFeatureSpec, PlaceholderRange) have no __post_init__.
import { decodeValue } from "@vllm-engine-core/protocol";
import { type DecodeRules, PIN_DECODE_RULES } from "../versions.js";
import { decodeLoRARequest } from "./lora-request.js";
import {
  decodeArrayStruct,
  decodeBool,
  decodeDict,
  decodeFloat,
  decodeInt,
  decodeList,
  decodeMapStruct,
  decodeStr,
  decodeStrAnyDict,
  type FieldSpec,
  nullable,
} from "./msgspec.js";
import { decodePoolingParams } from "./pooling-params.js";
import { PythonError } from "./python-errors.js";
import { type DecodedSamplingParams, decodeSamplingParams } from "./sampling-params.js";
import { decodeMmItem, decodeTensor } from "./serial-utils.js";

export interface DecodedEngineCoreRequest {
  request_id: string;
  prompt_token_ids: bigint[] | null;
  sampling_params: DecodedSamplingParams | null;
  pooling_params: Record<string, unknown> | null;
  client_index: bigint;
  current_wave: bigint;
  abort_immediately: boolean;
  [field: string]: unknown;
}

function fields(aux: readonly Uint8Array[], rules: DecodeRules): FieldSpec[] {
  const tensor = (v: unknown, p: string) => decodeTensor(v, p, aux);
  const placeholderRange: FieldSpec[] = [
    { name: "offset", decode: decodeInt },
    { name: "length", decode: decodeInt },
    { name: "is_embed", decode: nullable(tensor), default: () => null },
  ];
  const featureSpec: FieldSpec[] = [
    { name: "data", decode: nullable((v, p) => decodeMmItem(v, p, aux)) },
    { name: "modality", decode: decodeStr },
    { name: "identifier", decode: decodeStr },
    { name: "mm_position", decode: (v, p) => decodeMapStruct(v, p, placeholderRange) },
    { name: "mm_hash", decode: nullable(decodeStr), default: () => null },
  ];
  const ints = (v: unknown, p: string) => decodeList(v, p, decodeInt);
  return [
    { name: "request_id", decode: decodeStr },
    { name: "prompt_token_ids", decode: nullable(ints) },
    {
      name: "mm_features",
      decode: nullable((v, p) => decodeList(v, p, (x, q) => decodeMapStruct(x, q, featureSpec))),
    },
    { name: "sampling_params", decode: nullable((v, p) => decodeSamplingParams(v, p, rules)) },
    { name: "pooling_params", decode: nullable((v, p) => decodePoolingParams(v, p, rules)) },
    { name: "arrival_time", decode: decodeFloat },
    { name: "lora_request", decode: nullable(decodeLoRARequest) },
    { name: "cache_salt", decode: nullable(decodeStr) },
    { name: "data_parallel_rank", decode: nullable(decodeInt) },
    { name: "prompt_embeds", decode: nullable(tensor), default: () => null },
    {
      name: "prompt_is_token_ids",
      decode: nullable((v, p) => decodeList(v, p, decodeBool)),
      default: () => null,
    },
    { name: "client_index", decode: decodeInt, default: () => 0n },
    { name: "current_wave", decode: decodeInt, default: () => 0n },
    { name: "priority", decode: decodeInt, default: () => 0n },
    {
      name: "trace_headers",
      decode: nullable((v, p) => decodeDict(v, p, decodeStr, decodeStr)),
      default: () => null,
    },
    { name: "resumable", decode: decodeBool, default: () => false },
    { name: "external_req_id", decode: nullable(decodeStr), default: () => null },
    { name: "reasoning_ended", decode: nullable(decodeBool), default: () => null },
    { name: "reasoning_parser_kwargs", decode: nullable(decodeStrAnyDict), default: () => null },
    { name: "abort_immediately", decode: decodeBool, default: () => false },
  ];
}

/**
 * `add_request_decoder.decode(data_frames)`: frame 0 is the payload, every frame is an aux buffer.
 * `rules`: the decode-time checks of the vLLM version the engine plays (default the pin). The
 * EngineCoreRequest fields are the same 20 in v0.22–main; extra trailing elements are skipped.
 */
export function decodeEngineCoreRequest(
  dataFrames: readonly Uint8Array[],
  rules: DecodeRules = PIN_DECODE_RULES,
): DecodedEngineCoreRequest {
  const payload = dataFrames[0];
  if (payload === undefined) throw new PythonError("IndexError", "list index out of range");
  let value: unknown;
  try {
    value = decodeValue(payload);
  } catch (error) {
    throw new PythonError(
      "msgspec.DecodeError",
      `MessagePack data is malformed: ${(error as Error).message}`,
    );
  }
  const specs = fields(dataFrames, rules);
  const decoded = decodeArrayStruct(value, "$", specs) as DecodedEngineCoreRequest;
  // msgspec skips the elements past the struct's fields (a newer frontend's session_id, appended after the
  // pin): the engine never sees them. Kept apart, for the mock's log only.
  if (Array.isArray(value) && value.length > specs.length)
    decoded.skipped_trailing = value.slice(specs.length);
  return decoded;
}

/** The request id of an undecodable ADD, when its first element is a string (for the mock's log only). */
export function recoverRequestId(dataFrames: readonly Uint8Array[]): string | undefined {
  try {
    const value = decodeValue(dataFrames[0]!);
    return Array.isArray(value) && typeof value[0] === "string" ? value[0] : undefined;
  } catch {
    return undefined;
  }
}
