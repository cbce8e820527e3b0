// internal; bundled into @vllm-engine-core/runtime. Only the runtime worker may call connectTransport.
export { connectTransport } from "./connect.js";
// Its configuration (types, defaults, validation) is @vllm-engine-core/config's: connectTransport takes the
// ResolvedConfig that resolveConfig returned on the calling thread.
export { TransportUsageError } from "./errors.js";
export type {
  ConnectedEngine,
  ConnectOptions,
  CoordinatorLink,
  CoordinatorState,
  EngineTransport,
  OutputSink,
} from "./types.js";
