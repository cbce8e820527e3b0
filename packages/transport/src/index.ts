// internal; bundled into @vllm-engine-core/runtime. Only the runtime worker may call connectTransport.
export { connectTransport } from "./connect.js";
export { SENTINEL_ATTRIBUTION_WINDOW_MS, VANISH_GRACE_MS } from "./death-attribution.js";
export { InvalidTransportConfigError, TransportUsageError } from "./errors.js";
export { DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_HEARTBEAT_TIMEOUT_MS } from "./liveness.js";
export type {
  ConnectedEngine,
  ConnectOptions,
  CoordinatorConfig,
  CoordinatorLink,
  CoordinatorState,
  EngineTransport,
  HeartbeatOptions,
  OutputSink,
  TransportConfig,
} from "./types.js";
