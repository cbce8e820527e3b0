// @vllm-engine-core/runtime — internal: the runtime host under @vllm-engine-core/client (use the client).
// Loadable on any thread, never loads zeromq; importing it installs nothing (no listener, no exit handler):
// the main-thread host is installed by the main thread's first connect or attach, or by installRuntimeHost().

// The configuration schema lives in @vllm-engine-core/config (the client, this package and the transport
// share it).
export type {
  CoordinatorConfig,
  EngineCoreClientConfig as RuntimeConnectConfig,
  ResolvedConfig,
  TransportConfig,
} from "@vllm-engine-core/config";
export { attachConnection, openConnection } from "./caller/api.js";
export { installRuntimeHost } from "./caller/host.js";
export type {
  ConnectionDiagnostics,
  ConnectionHandle,
  ConnectionInfo,
  RequestSink,
  RuntimeConnection,
  UtilityCallOptions,
} from "./types.js";
