// @vllm-engine-core/protocol — byte-exact codec for vLLM's engine-core wire protocol, pinned to
// vLLM c67fe497 (see README.md). Pure: no sockets, no threads; safe to load anywhere.
export * from "./errors/index.js";
export {
  type CoordinatorPublish,
  decodeCoordinatorPublish,
  decodeFrontendWakeup,
  type EngineLoadCounts,
  encodeCoordinatorPublish,
  encodeFrontendWakeup,
  type FrontendWakeup,
} from "./messages/coordinator.js";
export {
  decodeHandshakeInit,
  decodeHandshakeStatus,
  decodeReadyResponse,
  encodeHandshakeInit,
  encodeHandshakeStatus,
  encodeReadyResponse,
} from "./messages/handshake.js";
export {
  ENGINE_CORE_DEAD,
  engineIdentity,
  engineIndexFromIdentity,
  isEngineCoreDead,
  RequestType,
} from "./messages/identity.js";
export {
  decodeInputMessage,
  decodeStartDpWavePayload,
  encodeAbortRequest,
  encodeAddRequest,
  encodeStartDpWave,
  encodeStartDpWavePayload,
  encodeUtilityCall,
  type InputMessage,
  type StartDpWave,
  type UtilityCall,
  withCurrentWave,
} from "./messages/input.js";
export {
  decodeEngineCoreOutputs,
  decodeOutputMessage,
  encodeEngineCoreOutputs,
  type OutputMessage,
  type OutputMessageParts,
  outputShapeProblem,
} from "./messages/output.js";
export { decodeOutputMessageKnowing, type KnownRequest } from "./messages/owned-output.js";
export { requestIdHash } from "./messages/request-id-hash.js";
export { type OutputRoute, readOutputRoute } from "./messages/route.js";
export { DEFAULT_AUX_THRESHOLD, type EncodeOptions } from "./messages/run.js";
export { readSchedulerStats } from "./messages/scheduler-stats.js";
export { decodeValue, encodeValue, loraRequestValue } from "./messages/value.js";
export { Float64, MsgpackExt } from "./msgpack/values.js";
export { VLLM_REVISION } from "./revision.js";
export type { StructLayout } from "./schema/struct.js";
export type { Tensor, TensorData } from "./schema/tensor.js";
export type {
  EngineCoreReadyResponse,
  EngineCoreReadyResponseInit,
  EngineHandshakeMetadata,
  EngineHandshakeMetadataInit,
  EngineZmqAddresses,
  EngineZmqAddressesInit,
  HandshakeStatus,
  KVEventsConfig,
  KVEventsConfigInit,
} from "./structs/handshake.js";
export {
  type EngineCoreEvent,
  EngineCoreEventType,
  type EngineCoreOutput,
  type EngineCoreOutputInit,
  type EngineCoreOutputs,
  type EngineCoreOutputsInit,
  FinishReason,
  type FinishReasonName,
  finishReasonName,
  type LogprobsLists,
  type LogprobsTensors,
  type PrefillStats,
  type PrefixCacheStats,
  type SchedulerIterationDetails,
  type SchedulerStats,
  type SchedulerStatsInit,
  type SpecDecodingStats,
  type UtilityOutput,
  type UtilityOutputInit,
  type UtilityResult,
} from "./structs/output.js";
export {
  type DecodedEngineCoreRequest,
  type EngineCoreRequest,
  type LateInteractionParams,
  type LateInteractionParamsInit,
  type LoRARequest,
  type LoRARequestInit,
  type MultiModalFeatureSpec,
  type MultiModalFeatureSpecInit,
  type MultiModalFieldElem,
  type NestedTensors,
  type PlaceholderRange,
  type PlaceholderRangeInit,
  POOLING_TASKS,
  type PoolingParams,
  type PoolingParamsInit,
  type PoolingTask,
} from "./structs/request.js";
export { type ResolvedSamplingParams, resolveSamplingParams } from "./structs/resolve.js";
export {
  type RepetitionDetectionParams,
  type RepetitionDetectionParamsInit,
  RequestOutputKind,
  type SamplingParams,
  type SamplingParamsInit,
  type StructuredOutputsParams,
  type StructuredOutputsParamsInit,
} from "./structs/sampling.js";
export * from "./versions/index.js";
