// SamplingParams and its nested dataclasses (vllm/sampling_params.py at the pinned revision).
import { BIG_INT, BOOL, FLOAT, INT, INT_FLOAT_MAP, intEnum, list, nullable, STR } from "../schema/codec.js";
import { type Decoded, type Init, mapStruct, optional, since, sparseStruct } from "../schema/struct.js";
import { INT_LIST, STR_ANY_MAP, STR_LIST, STR_OR_DICT, STR_OR_STR_LIST } from "./common.js";

const none = () => null;

/** Dataclass → map of all 11 fields (Python writes `_backend` and `_backend_was_auto` too). */
export const StructuredOutputsParamsCodec = mapStruct(
  "StructuredOutputsParams",
  [
    optional("json", "json", nullable(STR_OR_DICT), none),
    optional("regex", "regex", nullable(STR), none),
    optional("choice", "choice", nullable(STR_LIST), none),
    optional("grammar", "grammar", nullable(STR), none),
    optional("json_object", "jsonObject", nullable(BOOL), none),
    optional("disable_any_whitespace", "disableAnyWhitespace", BOOL, () => false),
    optional("disable_additional_properties", "disableAdditionalProperties", BOOL, () => false),
    optional("whitespace_pattern", "whitespacePattern", nullable(STR), none),
    optional("structural_tag", "structuralTag", nullable(STR), none),
    optional("_backend", "backend", nullable(STR), none),
    optional("_backend_was_auto", "backendWasAuto", BOOL, () => false),
  ] as const,
  {
    // __post_init__: exactly one kind of constraint.
    validate: (v) => {
      const kinds = ["json", "regex", "choice", "grammar", "jsonObject", "structuralTag"];
      const set = kinds.filter((k) => v[k] !== null && v[k] !== undefined).length;
      if (set > 1) return "only one kind of structured outputs constraint may be set";
      if (set < 1)
        return "one kind of structured outputs constraint must be set (json, regex, choice, grammar, json_object or structural_tag)";
      return undefined;
    },
  },
);

export const RepetitionDetectionParamsCodec = mapStruct(
  "RepetitionDetectionParams",
  [
    optional("max_pattern_size", "maxPatternSize", INT, () => 0),
    optional("min_pattern_size", "minPatternSize", INT, () => 0),
    optional("min_count", "minCount", INT, () => 0),
  ] as const,
  {
    // __post_init__ checks.
    validate: (v) => {
      const max = v.maxPatternSize as number;
      const min = v.minPatternSize as number;
      if (max < 0 || min < 0 || min > max) {
        return "max_pattern_size and min_pattern_size must be >= 0 with min_pattern_size <= max_pattern_size";
      }
      if (max > 0 && (v.minCount as number) < 2) return "min_count must be >= 2 when max_pattern_size > 0";
      return undefined;
    },
  },
);

/** RequestOutputKind: 0 CUMULATIVE, 1 DELTA, 2 FINAL_ONLY. */
export const RequestOutputKind = { CUMULATIVE: 0, DELTA: 1, FINAL_ONLY: 2 } as const;
export const OUTPUT_KIND = intEnum("RequestOutputKind", [0, 1, 2] as const);

/**
 * omit_defaults Struct, 37 fields in v0.22–v0.25 and 38 at the pin → map16 of the keys present in the
 * (sparse) view. Decode-time validation (`__post_init__`) differs per version: see VERSIONS.md.
 */
export const SamplingParamsCodec = sparseStruct("SamplingParams", [
  optional("n", "n", INT, () => 1),
  optional("presence_penalty", "presencePenalty", FLOAT, () => 0),
  optional("frequency_penalty", "frequencyPenalty", FLOAT, () => 0),
  optional("repetition_penalty", "repetitionPenalty", FLOAT, () => 1),
  optional("temperature", "temperature", FLOAT, () => 1),
  optional("top_p", "topP", FLOAT, () => 1),
  optional("top_k", "topK", INT, () => 0),
  optional("min_p", "minP", FLOAT, () => 0),
  optional("seed", "seed", nullable(BIG_INT), none),
  optional("stop", "stop", nullable(STR_OR_STR_LIST), none),
  optional("stop_token_ids", "stopTokenIds", nullable(INT_LIST), none),
  optional("ignore_eos", "ignoreEos", BOOL, () => false),
  optional("max_tokens", "maxTokens", nullable(INT), () => 16),
  optional("min_tokens", "minTokens", INT, () => 0),
  optional("logprobs", "logprobs", nullable(INT), none),
  optional("prompt_logprobs", "promptLogprobs", nullable(INT), none),
  optional("logprob_token_ids", "logprobTokenIds", nullable(INT_LIST), none),
  optional("flat_logprobs", "flatLogprobs", BOOL, () => false),
  optional("detokenize", "detokenize", BOOL, () => true),
  optional("skip_special_tokens", "skipSpecialTokens", BOOL, () => true),
  optional("spaces_between_special_tokens", "spacesBetweenSpecialTokens", BOOL, () => true),
  optional("include_stop_str_in_output", "includeStopStrInOutput", BOOL, () => false),
  optional("output_kind", "outputKind", OUTPUT_KIND, () => 0 as const),
  // 8040ef24 (#49754); a frontend knob (output_processor.py): older engines ignore the key.
  since("main", optional("stream_interval", "streamInterval", nullable(INT), none)),
  optional("skip_clone", "skipClone", BOOL, () => false),
  optional("output_text_buffer_length", "outputTextBufferLength", INT, () => 0),
  optional("_eos_token_id", "eosTokenId", nullable(INT), none),
  optional("_all_stop_token_ids", "allStopTokenIds", list(INT, { unique: true }), () => []),
  optional("structured_outputs", "structuredOutputs", nullable(StructuredOutputsParamsCodec), none),
  optional("logit_bias", "logitBias", nullable(INT_FLOAT_MAP), none),
  optional("allowed_token_ids", "allowedTokenIds", nullable(INT_LIST), none),
  optional("extra_args", "extraArgs", nullable(STR_ANY_MAP), none),
  optional("routed_experts_prompt_start", "routedExpertsPromptStart", INT, () => 0),
  optional("bad_words", "badWords", nullable(STR_LIST), none),
  optional("_bad_words_token_ids", "badWordsTokenIds", nullable(list(INT_LIST)), none),
  optional("skip_reading_prefix_cache", "skipReadingPrefixCache", nullable(BOOL), none),
  optional("thinking_token_budget", "thinkingTokenBudget", nullable(INT), none),
  optional("repetition_detection", "repetitionDetection", nullable(RepetitionDetectionParamsCodec), none),
] as const);

/** Sparse view: exactly the keys present on the wire / to be written (undefined = absent). */
export type SamplingParams = Decoded<typeof SamplingParamsCodec>;
/** SamplingParams as given to the encoder (nested structs in their input form). */
export type SamplingParamsInit = Init<typeof SamplingParamsCodec>;
export type StructuredOutputsParams = Decoded<typeof StructuredOutputsParamsCodec>;
export type StructuredOutputsParamsInit = Init<typeof StructuredOutputsParamsCodec>;
export type RepetitionDetectionParams = Decoded<typeof RepetitionDetectionParamsCodec>;
export type RepetitionDetectionParamsInit = Init<typeof RepetitionDetectionParamsCodec>;
