export { chatMessages } from "./chat.js";
export type { EngineClient, ServerContext, Usage } from "./context.js";
export type { CorsOptions } from "./cors.js";
export {
  type ErrorBody,
  InvalidLoraModuleError,
  InvalidServerOptionsError,
  LoraLoadError,
  OpenAIApiError,
  paramOfField,
  toApiError,
} from "./errors.js";
export type { MetricsAcrossServers } from "./metrics.js";
export { type LoraModule, parseLoraModules } from "./models.js";
export { MAX_LOGPROBS } from "./params.js";
export { REASONING_PARSER_NAMES, ReasoningParserError } from "./reasoning/index.js";
export { createServer, type ServerOptions } from "./server.js";
export { type SseStats, SseWriter } from "./sse.js";
export { TOOL_PARSER_NAMES, ToolParserError } from "./tool-parsers/index.js";
