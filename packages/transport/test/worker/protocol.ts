// Messages between a test (host thread) and the test runtime worker (test/worker/transport-worker.ts).

import type { HeartbeatConfig, TransportConfig } from "@vllm-engine-core/config";
import type { SerializedError } from "@vllm-engine-core/errors";
import type { EngineCoreOutputs } from "@vllm-engine-core/protocol";
import type { ConnectedEngine, CoordinatorState } from "../../src/index.ts";

export type WorkerCommand =
  | {
      op: "connect";
      config: TransportConfig;
      heartbeat?: HeartbeatConfig;
      sentinelAttributionWindowMs?: number;
      clientIndex?: number;
      coordinator?: { mode: "inproc" } | { mode: "external"; address: string };
      /** Abort the signal before calling connectTransport. */
      preAborted?: boolean;
      /** Abort right after connectTransport was called (during the first bind). */
      abortSynchronously?: boolean;
    }
  | { op: "abort"; reason: string }
  | { op: "start-output" }
  | { op: "send"; engineIndex: number; frames: Uint8Array[] }
  | { op: "close" }
  | { op: "resources" }
  | { op: "coordinator-state" }
  | { op: "coordinator-notify"; engineIndex: number }
  | { op: "exit" };

export interface ConnectResult {
  inputAddress: string;
  outputAddress: string;
  engines: ConnectedEngine[];
}

export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: SerializedError };

export type WorkerEvent =
  | { kind: "outputs"; outputs: EngineCoreOutputs; frameCount: number }
  | { kind: "dead"; engineIndex: number | null; reason: string; at: number }
  | { kind: "bad"; error: SerializedError; frameCount: number; senders: number[] };

export type WorkerMessage = ({ type: "reply" } & WorkerReply) | ({ type: "event" } & WorkerEvent);

export type { CoordinatorState };
