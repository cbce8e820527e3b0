// What the runtime needs from the transport, declared structurally so that only main.ts imports the
// transport package (it is bundled into the worker and must stay out of every other module).
import type { EngineCoreOutputs, EngineCoreReadyResponse, ProtocolError } from "@vllm-engine-core/protocol";
import type { RuntimeConnectConfig } from "../config.js";

export interface EngineOutputSink {
  onOutputs(outputs: EngineCoreOutputs, frames: Buffer[]): void;
  onEngineDead(engineIndex: number | null, reason: string): void;
  /** `senders`: the engines that push to the output socket the message came on. */
  onBadMessage(error: ProtocolError, frames: Buffer[], senders: readonly number[]): void;
}

export interface EngineIO {
  readonly inputAddress: string;
  readonly outputAddress: string;
  /** Sorted by identity bytes. */
  readonly engines: readonly {
    index: number;
    identity: Uint8Array;
    outputAddress: string;
    readyResponse: EngineCoreReadyResponse;
  }[];
  readonly coordinator: {
    state(): { currentWave: number; enginesRunning: boolean };
    notifyRequest(engineIndex: number): Promise<void>;
  } | null;
  startOutputLoop(sink: EngineOutputSink): void;
  send(engineIndex: number, frames: readonly Uint8Array[]): Promise<void>;
  close(): Promise<void>;
}

/** Runs the whole connection path (binds, handshakes, registrations); aborting closes what it opened. */
export type ConnectEngines = (config: RuntimeConnectConfig, signal: AbortSignal) => Promise<EngineIO>;
