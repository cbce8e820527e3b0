// What `serve --api-server-count N` passes between the main thread (the first API server, which owns the
// connection, the signals and the exit) and each further API server's worker thread.
import type { ClientHandle, StructuredOutputsConfig } from "@vllm-engine-core/client";
import type { MetricsSnapshot } from "@vllm-engine-core/metrics";
import type { ServerOptions } from "@vllm-engine-core/server";
import type { TokenizerOptions } from "@vllm-engine-core/text";

/** The server options that cross threads (structured-cloneable: no client, no tokenizer). */
export type PortableServerOptions = Omit<
  ServerOptions,
  "client" | "tokenizer" | "loadLoraModules" | "metricsAcrossServers"
>;

/** A worker's workerData. */
export interface ApiServerData {
  /** 1…N-1 (the main thread's server is 0). */
  index: number;
  handle: ClientHandle;
  structuredOutputs: StructuredOutputsConfig;
  /** The tokenizer's directory (each server loads its own tokenizer). */
  tokenizerDir: string;
  tokenizerOptions: TokenizerOptions;
  server: PortableServerOptions;
  host: string;
  /** The port the main thread's server bound (each server listens on it with SO_REUSEPORT). */
  port: number;
}

/** Main thread → worker. */
export type ToApiServer =
  | { kind: "snapshot"; id: number }
  | { kind: "exposition"; id: number; text?: string; error?: string }
  | { kind: "close" };

/** Worker → main thread. */
export type FromApiServer =
  | { kind: "listening" }
  | { kind: "snapshot"; id: number; snapshot?: MetricsSnapshot; error?: string }
  | { kind: "exposition"; id: number }
  | { kind: "closed" };
