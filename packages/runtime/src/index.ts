// @vllm-engine-core/runtime — the host side of the runtime: loadable on any thread, never loads zeromq.
// Importing it on the main thread installs the main-thread host (an unref'd BroadcastChannel listener)
// that spawns the runtime worker for connections opened from worker threads.
import { mainThreadSupervisor } from "./caller/rendezvous.js";

mainThreadSupervisor();

// The configuration schema lives in @vllm-engine-core/config (the client, this package and the transport
// share it); these are the names this package has always exported.
export type {
  CoordinatorConfig,
  EngineCoreClientConfig as RuntimeConnectConfig,
  ResolvedConfig,
  TransportConfig,
} from "@vllm-engine-core/config";
export { attachConnection, openConnection } from "./caller/api.js";
export type {
  ConnectionDiagnostics,
  ConnectionHandle,
  ConnectionInfo,
  RequestSink,
  RuntimeConnection,
  UtilityCallOptions,
} from "./types.js";
