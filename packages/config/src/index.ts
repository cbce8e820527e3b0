// @vllm-engine-core/config — the one configuration schema of the vLLM engine-core client: types, defaults
// and validation. Pure data, no sockets, no zeromq: loadable on any thread. The client, the runtime and the
// (private, bundled) transport all use it; see the runtime README for why it is a package of its own.
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
  isResolvedConfig,
  type ResolvedBootstrappedTransport,
  type ResolvedConfig,
  type ResolvedHandshakeOwnerTransport,
  type ResolvedHeartbeat,
  type ResolvedTransportConfig,
  type ResolvedTransportTuning,
  resolveConfig,
  resolveStructuredOutputsBackend,
  STRUCTURED_OUTPUTS_BACKENDS,
  type StructuredOutputsBackend,
  type StructuredOutputsConfig,
  type TransportConfig,
  type TransportTuning,
} from "./config.js";
export { InvalidConfigError } from "./errors.js";
