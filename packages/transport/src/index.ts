// internal; bundled into @vllm-engine-core/runtime. Only the runtime worker may call connectTransport.

// Its configuration (types, defaults, validation) is @vllm-engine-core/config's: connectTransport takes the
// ResolvedConfig that resolveConfig returned on the calling thread.
// TransportUsageError lives in @vllm-engine-core/errors, so it crosses threads as its typed class.
export { TransportUsageError } from "@vllm-engine-core/errors";
export { connectTransport } from "./connect.js";
export type {
  ConnectedEngine,
  ConnectOptions,
  CoordinatorLink,
  CoordinatorState,
  EngineTransport,
  OutputSink,
} from "./types.js";
