// The configuration schema (types, defaults, validation) has one home: @vllm-engine-core/config.
export {
  type BootstrappedTransport,
  type CoordinatorConfig,
  DEFAULT_ADVERTISED_HOST,
  DEFAULT_CLIENT_INDEX,
  DEFAULT_ENGINE_COUNT,
  DEFAULT_ENGINE_START_INDEX,
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  DEFAULT_READY_TIMEOUT_MS,
  DEFAULT_SENTINEL_ATTRIBUTION_WINDOW_MS,
  DEFAULT_VANISH_GRACE_MS,
  type EngineCoreClientConfig,
  type HandshakeOwnerTransport,
  type HeartbeatConfig,
  STRUCTURED_OUTPUTS_BACKENDS,
  type StructuredOutputsBackend,
  type StructuredOutputsConfig,
  type TransportConfig,
  type TransportTuning,
} from "@vllm-engine-core/config";
export {
  type EngineCoreOutput,
  type EngineCoreReadyResponse,
  type EngineCoreRequest,
  FinishReason,
  finishReasonName,
  type LoRARequest,
  type LoRARequestInit,
  type PrefillStats,
  type PrefixCacheStats,
  type SamplingParams,
  type SamplingParamsInit,
  type SchedulerStats,
  type SpecDecodingStats,
} from "@vllm-engine-core/protocol";
export type { ConnectionDiagnostics } from "@vllm-engine-core/runtime";
// For a process whose worker threads connect before its main thread does (see README, "Threads").
export { installRuntimeHost } from "@vllm-engine-core/runtime";
export { type ClientHandle, EngineCoreClient, type PauseMode, type UtilityCallOptions } from "./client.js";
export * from "./errors.js";
export type { SchedulerStatsListener, SleepStateListener } from "./observability.js";
export { EngineCoreOutputStream } from "./output-stream.js";
export type { CallRequest } from "./request.js";
export type { OutputObserver, OutputRecord, RequestTimings } from "./request-timings.js";
export { resolveStructuredOutputs } from "./structured-outputs/backend.js";
export { PIN_VERSION, type ValidateOptions, type VllmVersion, validateRequest } from "./validation/index.js";
