// EngineCoreOutputs and everything inside it (vllm/v1/engine/__init__.py, v1/outputs.py,
// v1/metrics/stats.py, v1/spec_decode/metrics.py). Field tables as of the pinned revision; `since`
// marks fields that released engines (v0.22–v0.25) do not send (see VERSIONS.md).
import { ANY, BOOL, CALL_ID, FLOAT, INT, intEnum, list, nullable, STR, strMap } from "../schema/codec.js";
import {
  arrayStruct,
  type Decoded,
  type Init,
  mapStruct,
  optional,
  required,
  since,
} from "../schema/struct.js";
import { TENSOR } from "../schema/tensor.js";
import { INT_LIST, INT_OR_STR, STR_ANY_MAP } from "./common.js";

const none = () => null;

export const FinishReason = { STOP: 0, LENGTH: 1, ABORT: 2, ERROR: 3, REPETITION: 4 } as const;
export type FinishReason = (typeof FinishReason)[keyof typeof FinishReason];
const FINISH_REASON_NAMES = ["stop", "length", "abort", "error", "repetition"] as const;
export type FinishReasonName = (typeof FINISH_REASON_NAMES)[number];

/** The string vLLM's frontends report for a finish reason (`str(FinishReason.X)`). */
export function finishReasonName(reason: number): FinishReasonName {
  const name = FINISH_REASON_NAMES[reason];
  if (name === undefined) throw new RangeError(`unknown finish reason ${reason} (expected 0-4)`);
  return name;
}

export const EngineCoreEventType = { QUEUED: 1, SCHEDULED: 2, PREEMPTED: 3 } as const;
export type EngineCoreEventType = (typeof EngineCoreEventType)[keyof typeof EngineCoreEventType];

/** Plain Struct (no omit_defaults) → always `{type, timestamp}`. */
export const EngineCoreEventCodec = mapStruct("EngineCoreEvent", [
  required("type", "type", intEnum("EngineCoreEventType", [1, 2, 3] as const)),
  required("timestamp", "timestamp", FLOAT),
] as const);

/** NamedTuple `[logprob_token_ids, logprobs, sampled_token_ranks, cu_num_generated_tokens]`. */
export const LogprobsListsCodec = arrayStruct("LogprobsLists", [
  required("logprob_token_ids", "logprobTokenIds", TENSOR),
  required("logprobs", "logprobs", TENSOR),
  required("sampled_token_ranks", "sampledTokenRanks", TENSOR),
  optional("cu_num_generated_tokens", "cuNumGeneratedTokens", nullable(INT_LIST), none),
] as const);

export const LogprobsTensorsCodec = arrayStruct("LogprobsTensors", [
  required("logprob_token_ids", "logprobTokenIds", TENSOR),
  required("logprobs", "logprobs", TENSOR),
  required("selected_token_ranks", "selectedTokenRanks", TENSOR),
  optional("cu_num_generated_tokens", "cuNumGeneratedTokens", nullable(INT_LIST), none),
] as const);

export const PrefillStatsCodec = mapStruct("PrefillStats", [
  optional("num_prompt_tokens", "numPromptTokens", INT, () => 0),
  optional("num_computed_tokens", "numComputedTokens", INT, () => 0),
  optional("num_cached_tokens", "numCachedTokens", INT, () => 0),
  optional("num_local_cached_tokens", "numLocalCachedTokens", INT, () => 0),
  optional("num_external_cached_tokens", "numExternalCachedTokens", INT, () => 0),
  // a287eb16 (#48535)
  since(
    "main",
    optional("num_cache_creation_tokens", "numCacheCreationTokens", INT, () => 0),
  ),
] as const);

export const PrefixCacheStatsCodec = mapStruct("PrefixCacheStats", [
  optional("reset", "reset", BOOL, () => false),
  optional("requests", "requests", INT, () => 0),
  optional("queries", "queries", INT, () => 0),
  optional("hits", "hits", INT, () => 0),
  optional("preempted_requests", "preemptedRequests", INT, () => 0),
  optional("preempted_queries", "preemptedQueries", INT, () => 0),
  optional("preempted_hits", "preemptedHits", INT, () => 0),
] as const);

/** vllm/v1/spec_decode/metrics.py SpecDecodingStats: dataclass → map of all fields. */
export const SpecDecodingStatsCodec = mapStruct("SpecDecodingStats", [
  required("num_spec_tokens", "numSpecTokens", INT),
  optional("num_drafts", "numDrafts", INT, () => 0),
  optional("num_draft_tokens", "numDraftTokens", INT, () => 0),
  optional("num_accepted_tokens", "numAcceptedTokens", INT, () => 0),
  optional("num_accepted_tokens_per_pos", "numAcceptedTokensPerPos", INT_LIST, () => []),
  // 4ef4492e9 (#32374)
  since(
    "0.24",
    optional("num_draft_tokens_per_pos", "numDraftTokensPerPos", INT_LIST, () => []),
  ),
] as const);

/** vllm/v1/metrics/stats.py SchedulerIterationDetails (5a65ba5f, #46647): dataclass → map of all fields. */
export const SchedulerIterationDetailsCodec = mapStruct("SchedulerIterationDetails", [
  required("iteration_index", "iterationIndex", INT),
  required("num_ctx_requests", "numCtxRequests", INT),
  required("num_ctx_tokens", "numCtxTokens", INT),
  required("num_generation_requests", "numGenerationRequests", INT),
  required("num_generation_tokens", "numGenerationTokens", INT),
  required("elapsed_ms", "elapsedMs", FLOAT),
  optional("num_encoder_inputs", "numEncoderInputs", INT, () => 0),
  optional("num_encoder_output_tokens", "numEncoderOutputTokens", INT, () => 0),
  optional("is_dummy", "isDummy", BOOL, () => false),
] as const);

/**
 * Dataclass → map of all fields: 15 keys (fixmap) in v0.22–v0.25, 16 (map16) at the pin. The nested
 * stats dataclasses other than the prefix-cache, spec-decoding and iteration ones are opaque.
 */
export const SchedulerStatsCodec = mapStruct("SchedulerStats", [
  optional("num_running_reqs", "numRunningReqs", INT, () => 0),
  optional("num_waiting_reqs", "numWaitingReqs", INT, () => 0),
  optional("num_skipped_waiting_reqs", "numSkippedWaitingReqs", INT, () => 0),
  optional("step_counter", "stepCounter", INT, () => 0),
  optional("current_wave", "currentWave", INT, () => 0),
  optional("kv_cache_usage", "kvCacheUsage", FLOAT, () => 0),
  // 5a65ba5f (#46647)
  since(
    "main",
    optional("iteration_details", "iterationDetails", nullable(SchedulerIterationDetailsCodec), none),
  ),
  optional("prefix_cache_stats", "prefixCacheStats", PrefixCacheStatsCodec, () => ({
    reset: false,
    requests: 0,
    queries: 0,
    hits: 0,
    preemptedRequests: 0,
    preemptedQueries: 0,
    preemptedHits: 0,
  })),
  optional(
    "connector_prefix_cache_stats",
    "connectorPrefixCacheStats",
    nullable(PrefixCacheStatsCodec),
    none,
  ),
  optional("kv_cache_eviction_events", "kvCacheEvictionEvents", list(ANY), () => []),
  optional("spec_decoding_stats", "specDecodingStats", nullable(SpecDecodingStatsCodec), none),
  optional("kv_connector_stats", "kvConnectorStats", nullable(STR_ANY_MAP), none),
  optional("waiting_lora_adapters", "waitingLoraAdapters", strMap(INT), () => ({})),
  optional("running_lora_adapters", "runningLoraAdapters", strMap(INT), () => ({})),
  optional("cudagraph_stats", "cudagraphStats", ANY, none),
  optional("perf_stats", "perfStats", ANY, none),
] as const);

/**
 * array_like: 13 fields in v0.22–v0.25, 14 at the pin, where ec_transfer_params was INSERTED at index 9
 * (8df14cfc, #42433). The array length on the wire picks the layout: from a 13-element output
 * `ecTransferParams` is absent and trace_headers… are read from indices 9–12.
 */
export const EngineCoreOutputCodec = arrayStruct("EngineCoreOutput", [
  required("request_id", "requestId", STR),
  required("new_token_ids", "newTokenIds", INT_LIST),
  optional("new_logprobs", "newLogprobs", nullable(LogprobsListsCodec), none),
  optional("new_prompt_logprobs_tensors", "newPromptLogprobsTensors", nullable(LogprobsTensorsCodec), none),
  optional("pooling_output", "poolingOutput", nullable(TENSOR), none),
  optional(
    "finish_reason",
    "finishReason",
    nullable(intEnum("FinishReason", [0, 1, 2, 3, 4] as const)),
    none,
  ),
  optional("stop_reason", "stopReason", nullable(INT_OR_STR), none),
  optional("events", "events", nullable(list(EngineCoreEventCodec)), none),
  optional("kv_transfer_params", "kvTransferParams", nullable(STR_ANY_MAP), none),
  since("main", optional("ec_transfer_params", "ecTransferParams", nullable(STR_ANY_MAP), none)),
  optional("trace_headers", "traceHeaders", nullable(strMap(STR)), none),
  optional("prefill_stats", "prefillStats", nullable(PrefillStatsCodec), none),
  optional("routed_experts", "routedExperts", nullable(TENSOR), none),
  optional("num_nans_in_logits", "numNansInLogits", INT, () => 0),
] as const);

/** `UtilityResult` on the wire: `[type_info, value]` (type_info is None unless insecure serialization is on). */
export const UtilityResultCodec = arrayStruct("UtilityResult", [
  required("type_info", "typeInfo", ANY),
  required("value", "value", ANY),
] as const);

/** array_like without omit_defaults: `[call_id, failure_message, result]`. */
export const UtilityOutputCodec = arrayStruct("UtilityOutput", [
  required("call_id", "callId", CALL_ID),
  optional("failure_message", "failureMessage", nullable(STR), none),
  optional("result", "result", nullable(UtilityResultCodec), none),
] as const);

/** array_like, 8 fields. */
export const EngineCoreOutputsCodec = arrayStruct("EngineCoreOutputs", [
  optional("engine_index", "engineIndex", INT, () => 0),
  optional("outputs", "outputs", list(EngineCoreOutputCodec), () => []),
  optional("scheduler_stats", "schedulerStats", nullable(SchedulerStatsCodec), none),
  optional("timestamp", "timestamp", FLOAT, () => 0),
  optional("utility_output", "utilityOutput", nullable(UtilityOutputCodec), none),
  optional("finished_requests", "finishedRequests", nullable(list(STR, { unique: true })), none),
  optional("wave_complete", "waveComplete", nullable(INT), none),
  optional("start_wave", "startWave", nullable(INT), none),
] as const);

export type EngineCoreEvent = Decoded<typeof EngineCoreEventCodec>;
export type LogprobsLists = Decoded<typeof LogprobsListsCodec>;
export type LogprobsTensors = Decoded<typeof LogprobsTensorsCodec>;
export type PrefillStats = Decoded<typeof PrefillStatsCodec>;
export type PrefixCacheStats = Decoded<typeof PrefixCacheStatsCodec>;
export type SpecDecodingStats = Decoded<typeof SpecDecodingStatsCodec>;
export type SchedulerIterationDetails = Decoded<typeof SchedulerIterationDetailsCodec>;
export type SchedulerStats = Decoded<typeof SchedulerStatsCodec>;
export type SchedulerStatsInit = Init<typeof SchedulerStatsCodec>;
export type EngineCoreOutput = Decoded<typeof EngineCoreOutputCodec>;
export type EngineCoreOutputInit = Init<typeof EngineCoreOutputCodec>;
export type UtilityResult = Decoded<typeof UtilityResultCodec>;
export type UtilityOutput = Decoded<typeof UtilityOutputCodec>;
export type UtilityOutputInit = Init<typeof UtilityOutputCodec>;
export type EngineCoreOutputs = Decoded<typeof EngineCoreOutputsCodec>;
export type EngineCoreOutputsInit = Init<typeof EngineCoreOutputsCodec>;
