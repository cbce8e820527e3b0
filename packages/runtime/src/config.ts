// Connection configuration as the host sees it. These mirror the transport's config types on purpose:
// the transport is private and bundled into the worker, so the public declarations must not name it.
// src/worker/main.ts passes them to the transport, where tsc checks that the shapes still agree.

export type TransportConfig =
  | {
      mode: "handshake-owner";
      /** The handshake ROUTER address the engines connect to, e.g. "tcp://127.0.0.1:5555". */
      handshakeAddress: string;
      /** Host advertised to engines for the input/output sockets (default 127.0.0.1). */
      advertisedHost?: string;
      /** Number of engines expected on the handshake socket (default 1). */
      engineCount?: number;
      /** How long to wait for every engine's HELLO/READY/registration (default 30 000 ms). */
      readyTimeoutMs?: number;
      localInputAddress?: string;
      localOutputAddress?: string;
    }
  | {
      mode: "bootstrapped";
      inputAddress: string;
      outputAddress: string;
      engineStartIndex?: number;
      engineCount?: number;
      readyTimeoutMs?: number;
    };

export type CoordinatorConfig = { mode: "inproc" } | { mode: "external"; address: string };

export interface RuntimeConnectConfig {
  transport: TransportConfig;
  coordinator?: CoordinatorConfig;
  /** The client index stamped on utility calls (default 0). */
  clientIndex?: number;
  /** Informational; carried in ConnectionInfo. */
  modelName?: string;
}
