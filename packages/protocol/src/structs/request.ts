// EngineCoreRequest and its nested request-side structs (vllm/v1/engine/__init__.py, pooling_params.py,
// lora/request.py, multimodal/inputs.py at the pinned revision).
import { fail, withSegment } from "../msgpack/fault.js";
import type { Reader } from "../msgpack/reader.js";
import { Float64 } from "../msgpack/values.js";
import type { Writer } from "../msgpack/writer.js";
import {
  ANY,
  BOOL,
  type Codec,
  FLOAT,
  INT,
  intEnum,
  list,
  nullable,
  STR,
  strLiteral,
  strMap,
} from "../schema/codec.js";
import {
  arrayStruct,
  type Decoded,
  type Init,
  mapStruct,
  optional,
  required,
  since,
} from "../schema/struct.js";
import { isTensorLike, TENSOR, type Tensor } from "../schema/tensor.js";
import { DICT, INT_LIST, STR_ANY_MAP } from "./common.js";
import { SamplingParamsCodec } from "./sampling.js";

const none = () => null;

export const LoRARequestCodec = arrayStruct(
  "LoRARequest",
  [
    required("lora_name", "loraName", STR),
    required("lora_int_id", "loraIntId", INT),
    optional("lora_path", "loraPath", STR, () => ""),
    optional("base_model_name", "baseModelName", nullable(STR), none),
    optional("tensorizer_config_dict", "tensorizerConfigDict", nullable(DICT), none),
    optional("load_inplace", "loadInplace", BOOL, () => false),
    optional("is_3d_lora_weight", "is3dLoraWeight", BOOL, () => false),
  ] as const,
  {
    // __post_init__ checks.
    validate: (v) => {
      if ((v.loraIntId as number) < 1) return `lora_int_id must be > 0, got ${v.loraIntId}`;
      if (v.loraPath === "") return "lora_path must not be empty";
      return undefined;
    },
  },
);

export const LateInteractionParamsCodec = arrayStruct("LateInteractionParams", [
  required("mode", "mode", STR),
  required("query_key", "queryKey", STR),
  optional("query_uses", "queryUses", nullable(INT), none),
] as const);

export const POOLING_TASKS = [
  "embed",
  "classify",
  "token_embed",
  "token_classify",
  "plugin",
  "embed&token_classify",
] as const;
export type PoolingTask = (typeof POOLING_TASKS)[number];

export const PoolingParamsCodec = arrayStruct("PoolingParams", [
  optional("use_activation", "useActivation", nullable(BOOL), none),
  optional("dimensions", "dimensions", nullable(INT), none),
  optional("step_tag_id", "stepTagId", nullable(INT), none),
  optional("returned_token_ids", "returnedTokenIds", nullable(INT_LIST), none),
  optional("task", "task", nullable(strLiteral("PoolingTask", POOLING_TASKS)), none),
  optional("requires_token_ids", "requiresTokenIds", BOOL, () => false),
  optional("skip_reading_prefix_cache", "skipReadingPrefixCache", nullable(BOOL), none),
  optional("late_interaction_params", "lateInteractionParams", nullable(LateInteractionParamsCodec), none),
  optional("extra_kwargs", "extraKwargs", nullable(STR_ANY_MAP), none),
  optional("output_kind", "outputKind", intEnum("RequestOutputKind", [0, 1, 2] as const), () => 2 as const),
] as const);

/** Nested tensors of a multimodal field: a tensor, a number, or a list of nested tensors. */
export type NestedTensors = Tensor | number | Float64 | NestedTensors[];

const NESTED_TENSORS: Codec<NestedTensors> = {
  label: "NestedTensors",
  nullable: false,
  decode: function decodeNested(r: Reader): NestedTensors {
    if (r.isArray()) {
      const start = r.pos;
      const n = r.array();
      // A list whose first element is a str is a tensor [dtype, shape, data] (as vLLM decides).
      if (n > 0 && r.isStr()) {
        r.pos = start;
        return TENSOR.decode(r);
      }
      // Bounded like opaque values, so hostile nesting fails with a ProtocolError, not a stack overflow.
      r.enter();
      const out = new Array<NestedTensors>(n);
      let i = 0;
      try {
        for (; i < n; i++) out[i] = decodeNested(r);
      } catch (err) {
        throw withSegment(err, `[${i}]`);
      }
      r.leave();
      return out;
    }
    if (r.isInt()) return r.int();
    const b = r.peek();
    if (b === 0xca || b === 0xcb) {
      const v = r.float();
      return Number.isInteger(v) ? new Float64(v) : v;
    }
    return fail("expected a tensor, a number or a list of nested tensors");
  },
  encode: function encodeNested(w: Writer, v: NestedTensors): void {
    if (typeof v === "number") {
      if (Number.isSafeInteger(v)) w.int(v);
      else w.f64(v);
    } else if (v instanceof Float64) {
      w.f64(v.value);
    } else if (Array.isArray(v)) {
      w.arrayHeader(v.length);
      for (let i = 0; i < v.length; i++) {
        try {
          encodeNested(w, v[i]!);
        } catch (err) {
          throw withSegment(err, `[${i}]`);
        }
      }
    } else if (isTensorLike(v)) {
      TENSOR.encode(w, v);
    } else {
      fail("expected a tensor, a number or a list of nested tensors");
    }
  },
};

/** One field of a MultiModalKwargsItem: `{data, field: [factory, kwargs]}`. */
export const MultiModalFieldElemCodec = mapStruct("MultiModalFieldElem", [
  required("data", "data", nullable(NESTED_TENSORS)),
  required("field", "field", ANY),
] as const);

export const PlaceholderRangeCodec = mapStruct("PlaceholderRange", [
  required("offset", "offset", INT),
  required("length", "length", INT),
  optional("is_embed", "isEmbed", nullable(TENSOR), none),
] as const);

export const MultiModalFeatureSpecCodec = mapStruct("MultiModalFeatureSpec", [
  required("data", "data", nullable(strMap(MultiModalFieldElemCodec))),
  required("modality", "modality", STR),
  required("identifier", "identifier", STR),
  required("mm_position", "mmPosition", PlaceholderRangeCodec),
  optional("mm_hash", "mmHash", nullable(STR), none),
] as const);

/**
 * array_like Struct, fields 0–8 required: 20 fields in every release from v0.22 to the pin; upstream
 * main after the pin appends session_id (f57123aa, #48048). Fields newer than the encode target are
 * appended only when set: an older engine's msgspec skips extra trailing elements
 * (mpack_decode_struct_array_inner; vLLM never sets forbid_unknown_fields).
 */
export const EngineCoreRequestCodec = arrayStruct("EngineCoreRequest", [
  required("request_id", "requestId", STR),
  required("prompt_token_ids", "promptTokenIds", nullable(INT_LIST)),
  required("mm_features", "mmFeatures", nullable(list(MultiModalFeatureSpecCodec))),
  required("sampling_params", "samplingParams", nullable(SamplingParamsCodec)),
  required("pooling_params", "poolingParams", nullable(PoolingParamsCodec)),
  required("arrival_time", "arrivalTime", FLOAT),
  required("lora_request", "loraRequest", nullable(LoRARequestCodec)),
  required("cache_salt", "cacheSalt", nullable(STR)),
  required("data_parallel_rank", "dataParallelRank", nullable(INT)),
  optional("prompt_embeds", "promptEmbeds", nullable(TENSOR), none),
  optional("prompt_is_token_ids", "promptIsTokenIds", nullable(list(BOOL)), none),
  optional("client_index", "clientIndex", INT, () => 0),
  optional("current_wave", "currentWave", INT, () => 0),
  optional("priority", "priority", INT, () => 0),
  optional("trace_headers", "traceHeaders", nullable(strMap(STR)), none),
  optional("resumable", "resumable", BOOL, () => false),
  optional("external_req_id", "externalReqId", nullable(STR), none),
  optional("reasoning_ended", "reasoningEnded", nullable(BOOL), none),
  optional("reasoning_parser_kwargs", "reasoningParserKwargs", nullable(STR_ANY_MAP), none),
  optional("abort_immediately", "abortImmediately", BOOL, () => false),
  since("next", optional("session_id", "sessionId", nullable(STR), none)),
] as const);

export type LoRARequest = Decoded<typeof LoRARequestCodec>;
export type LoRARequestInit = Init<typeof LoRARequestCodec>;
export type LateInteractionParams = Decoded<typeof LateInteractionParamsCodec>;
export type LateInteractionParamsInit = Init<typeof LateInteractionParamsCodec>;
export type PoolingParams = Decoded<typeof PoolingParamsCodec>;
export type PoolingParamsInit = Init<typeof PoolingParamsCodec>;
export type MultiModalFieldElem = Decoded<typeof MultiModalFieldElemCodec>;
export type PlaceholderRange = Decoded<typeof PlaceholderRangeCodec>;
export type PlaceholderRangeInit = Init<typeof PlaceholderRangeCodec>;
export type MultiModalFeatureSpec = Decoded<typeof MultiModalFeatureSpecCodec>;
export type MultiModalFeatureSpecInit = Init<typeof MultiModalFeatureSpecCodec>;
/** Decoded request: every field present (defaults filled in). */
export type DecodedEngineCoreRequest = Decoded<typeof EngineCoreRequestCodec>;
/** Request as given to the encoder: fields with defaults or that accept null may be left out. */
export type EngineCoreRequest = Init<typeof EngineCoreRequestCodec>;
