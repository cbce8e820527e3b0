export {
  type EngineCoreOutput,
  type EngineCoreReadyResponse,
  type EngineCoreRequest,
  FinishReason,
  finishReasonName,
  type LoRARequest,
  type LoRARequestInit,
  type SamplingParams,
  type SamplingParamsInit,
} from "@vllm-engine-core/protocol";
export type { ConnectionDiagnostics } from "@vllm-engine-core/runtime";
export { type ClientHandle, EngineCoreClient, type PauseMode, type UtilityCallOptions } from "./client.js";
export {
  type BootstrappedTransport,
  type CoordinatorConfig,
  DEFAULT_ADVERTISED_HOST,
  DEFAULT_CLIENT_INDEX,
  DEFAULT_ENGINE_COUNT,
  DEFAULT_READY_TIMEOUT_MS,
  type EngineCoreClientConfig,
  type HandshakeOwnerTransport,
} from "./config.js";
export * from "./errors.js";
export { EngineCoreOutputStream } from "./output-stream.js";
export type { CallRequest } from "./request.js";
export {
  PIN_VERSION,
  REQUEST_RULES,
  type RuleSpec,
  type RuleStage,
  rulesFor,
  type ValidateOptions,
  type VllmVersion,
  validateRequest,
} from "./validation/index.js";
