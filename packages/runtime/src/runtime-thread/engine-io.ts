// The transport as the runtime sees it. Derived from the transport's own types (a type-only import, erased
// from the bundle; tools/boundaries lets src/runtime-thread/** import the transport), so the two cannot drift.
import type { ResolvedConfig } from "@vllm-engine-core/config";
import type { EngineTransport, OutputSink } from "@vllm-engine-core/transport";

export type EngineIO = EngineTransport;
export type EngineOutputSink = OutputSink;

/**
 * Runs the whole connection path (binds, handshakes, registrations) with a config resolved on the calling
 * thread; aborting closes what it opened.
 */
export type ConnectEngines = (config: ResolvedConfig, signal: AbortSignal) => Promise<EngineIO>;
