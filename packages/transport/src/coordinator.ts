// Frontend side of vLLM's data-parallel wave coordinator (spec §8.3–8.4).
//  - "inproc": this frontend IS the coordinator for its engines: an XPUB the engines subscribe to (startup
//    gate, START_DP_WAVE broadcasts) and a PULL on which they report wave_complete / start_wave.
//  - "external": a Python DPCoordinatorProc owns the engines' side; this frontend subscribes (XSUB) to its
//    frontend-facing XPUB for (counts, wave, running) and sends the wake-up [engine_index, wave].

import { HandshakeTimeoutError, UnexpectedHandshakeMessageError } from "@vllm-engine-core/errors";
import {
  decodeCoordinatorPublish,
  decodeOutputMessage,
  encodeFrontendWakeup,
  encodeStartDpWave,
} from "@vllm-engine-core/protocol";
import * as zmq from "zeromq";
import { SerialSendQueue } from "./send-queue.js";
import { BASE_SOCKET_OPTIONS, describe, type SocketSet } from "./sockets.js";
import type { CoordinatorLink, CoordinatorState } from "./types.js";
import { receiveWithin } from "./waits.js";

const SUBSCRIBE_ALL = Uint8Array.of(0x01);
const COORDINATOR_READY = new TextEncoder().encode("READY");

/** Reports a fatal coordinator failure (the transport turns it into onEngineDead(null, reason)). */
export type CoordinatorFailure = (reason: string) => void;

export interface CoordinatorRuntime extends CoordinatorLink {
  /** Starts the background loop; failures go to `onFailure`. */
  start(onFailure: CoordinatorFailure): void;
  /** Stops accepting work; the sockets are closed by the owning SocketSet. */
  stop(): void;
}

abstract class WaveState {
  protected current: CoordinatorState = { currentWave: 0, enginesRunning: false };
  protected stopped = false;

  state(): CoordinatorState {
    return { ...this.current };
  }
}

/** In-proc coordinator: binds the engine-facing XPUB + PULL; runs the startup gate and wave bookkeeping. */
export class InprocCoordinator extends WaveState implements CoordinatorRuntime {
  readonly mode = "inproc" as const;
  readonly #publish: zmq.XPublisher;
  readonly #collect: zmq.Pull;
  readonly #queue: SerialSendQueue;
  readonly inputAddress: string;
  readonly outputAddress: string;

  private constructor(
    publish: zmq.XPublisher,
    collect: zmq.Pull,
    inputAddress: string,
    outputAddress: string,
  ) {
    super();
    this.#publish = publish;
    this.#collect = collect;
    this.#queue = new SerialSendQueue(publish);
    this.inputAddress = inputAddress;
    this.outputAddress = outputAddress;
  }

  /** Binds both sockets on tcp://<host>:0 (their endpoints go into every engine's INIT). */
  static async open(sockets: SocketSet, host: string): Promise<InprocCoordinator> {
    // verbosity "allSubs" = XPUB_VERBOSE: every engine's (identical) subscription reaches us, one per engine.
    const publish = sockets.add(new zmq.XPublisher({ ...BASE_SOCKET_OPTIONS, verbosity: "allSubs" }));
    const collect = sockets.add(new zmq.Pull({ ...BASE_SOCKET_OPTIONS, receiveHighWaterMark: 0 }));
    const inputAddress = await sockets.bind(publish, tcpAnyPort(host), "coordinator");
    const outputAddress = await sockets.bind(collect, tcpAnyPort(host), "coordinator");
    return new InprocCoordinator(publish, collect, inputAddress, outputAddress);
  }

  /** Startup gate (spec §3.4 step 6): one 0x01 subscription per engine, then publish READY. */
  async gate(engineCount: number, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
    for (let received = 0; received < engineCount; received++) {
      const frames = await receiveWithin(
        this.#publish,
        timeoutMs,
        signal,
        () =>
          new HandshakeTimeoutError({
            stage: "COORDINATOR",
            engineIndex: null,
            address: this.inputAddress,
            timeoutMs,
          }),
      );
      if (frames.length !== 1 || frames[0]!.length !== 1 || frames[0]![0] !== 0x01) {
        throw new UnexpectedHandshakeMessageError({
          address: this.inputAddress,
          detail: `expected the subscription frame [0x01] from an engine's coordinator XSUB, got ${frames.length} frame(s) starting ${frames[0]?.subarray(0, 8).toString("hex") ?? "(none)"}`,
        });
      }
    }
    await this.#queue.send([COORDINATOR_READY]);
  }

  start(onFailure: CoordinatorFailure): void {
    void this.#run().catch((error: unknown) => {
      if (!this.stopped) onFailure(`in-process coordinator failed: ${describe(error)}`);
    });
  }

  stop(): void {
    this.stopped = true;
    this.#queue.close(new Error("coordinator stopped"));
  }

  async notifyRequest(engineIndex: number): Promise<void> {
    if (this.current.enginesRunning || this.stopped) return;
    // The request is stamped with the current wave, so it is never stale here: exclude its engine.
    this.current.enginesRunning = true;
    await this.#broadcastStartWave(this.current.currentWave, engineIndex);
  }

  async #run(): Promise<void> {
    while (!this.stopped) {
      let frames: Buffer[];
      try {
        frames = await this.#collect.receive();
      } catch (error) {
        if (this.stopped || this.#collect.closed) return;
        throw error;
      }
      const message = decodeOutputMessage(frames);
      if (message.kind === "dead") continue; // engines only send the sentinel to frontends, never here
      const out = message.outputs;
      if (out.waveComplete != null) {
        if (out.waveComplete >= this.current.currentWave) {
          this.current = { currentWave: out.waveComplete + 1, enginesRunning: false };
        }
      } else if (out.startWave != null) {
        const wave = out.startWave;
        if (
          wave > this.current.currentWave ||
          (wave === this.current.currentWave && !this.current.enginesRunning)
        ) {
          this.current = { currentWave: wave, enginesRunning: true };
          await this.#broadcastStartWave(wave, out.engineIndex);
        }
      } else if (
        out.outputs.length > 0 ||
        (out.finishedRequests != null && out.finishedRequests.length > 0)
      ) {
        throw new Error(`engine ${out.engineIndex} sent request outputs to the coordinator socket`);
      }
      // Otherwise: a stats-only batch; not used for routing here.
    }
  }

  #broadcastStartWave(wave: number, exclude: number | null): Promise<void> {
    return this.#queue.send(encodeStartDpWave({ wave, excludeEngineIndex: exclude }));
  }
}

/** External coordinator client: XSUB to the coordinator's frontend-facing XPUB. */
export class ExternalCoordinator extends WaveState implements CoordinatorRuntime {
  readonly mode = "external" as const;
  readonly #socket: zmq.XSubscriber;
  readonly #queue: SerialSendQueue;
  readonly address: string;

  private constructor(socket: zmq.XSubscriber, address: string) {
    super();
    this.#socket = socket;
    this.#queue = new SerialSendQueue(socket);
    this.address = address;
  }

  static connect(sockets: SocketSet, address: string): ExternalCoordinator {
    const socket = sockets.add(new zmq.XSubscriber({ ...BASE_SOCKET_OPTIONS }));
    socket.connect(address);
    const coordinator = new ExternalCoordinator(socket, address);
    void coordinator.#queue.send([SUBSCRIBE_ALL]).catch(() => undefined);
    return coordinator;
  }

  start(onFailure: CoordinatorFailure): void {
    void this.#run().catch((error: unknown) => {
      if (!this.stopped) onFailure(`external coordinator at ${this.address} failed: ${describe(error)}`);
    });
  }

  stop(): void {
    this.stopped = true;
    this.#queue.close(new Error("coordinator stopped"));
  }

  async notifyRequest(engineIndex: number): Promise<void> {
    if (this.current.enginesRunning || this.stopped) return;
    this.current.enginesRunning = true;
    await this.#queue.send([encodeFrontendWakeup({ engine: engineIndex, wave: this.current.currentWave })]);
  }

  async #run(): Promise<void> {
    while (!this.stopped) {
      let frames: Buffer[];
      try {
        frames = await this.#socket.receive();
      } catch (error) {
        if (this.stopped || this.#socket.closed) return;
        throw error;
      }
      if (frames.length !== 1) throw new Error(`coordinator publish has ${frames.length} frames, expected 1`);
      const publish = decodeCoordinatorPublish(frames[0]!);
      this.current = {
        currentWave: publish.wave,
        enginesRunning: publish.enginesRunning,
        counts: publish.counts ?? this.current.counts ?? null,
      };
    }
  }
}

export function tcpAnyPort(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `tcp://[${host}]:0` : `tcp://${host}:0`;
}
