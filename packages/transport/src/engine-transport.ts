import {
  ClientClosedError,
  EngineDeadError,
  InvalidDataParallelRankError,
  TransportUsageError,
} from "@vllm-engine-core/errors";
import {
  decodeOutputMessage,
  isEngineCoreDead,
  ProtocolError,
  readOutputRoute,
} from "@vllm-engine-core/protocol";
import type * as zmq from "zeromq";
import type { CoordinatorRuntime } from "./coordinator.js";
import { DeathAttribution } from "./death-attribution.js";
import { identityHex } from "./identity.js";
import { disconnectedIdentity } from "./liveness.js";
import { SerialSendQueue } from "./send-queue.js";
import { describe, type SocketSet } from "./sockets.js";
import type { ConnectedEngine, CoordinatorLink, EngineTransport, OutputSink } from "./types.js";

/** The full decoder's error for a message whose routing read is incomplete (so it cannot decode either). */
function undecodable(frames: readonly Uint8Array[]): ProtocolError {
  try {
    decodeOutputMessage(frames);
  } catch (error) {
    return error instanceof ProtocolError
      ? error
      : new ProtocolError({ struct: "EngineCoreOutputs", detail: describe(error) });
  }
  return new ProtocolError({ struct: "EngineCoreOutputs", detail: "its routing fields cannot be read" });
}

/** setInterval's maximum period; the interval only exists to hold the thread open. */
const KEEP_ALIVE_PERIOD_MS = 2 ** 31 - 1;

/** One output PULL socket and the engines that push to it. */
export interface OutputRoute {
  socket: zmq.Pull;
  address: string;
}

export interface TransportParts {
  sockets: SocketSet;
  input: zmq.Router;
  inputAddress: string;
  /** Every output socket; each engine's `outputAddress` names the one it pushes to. */
  outputs: OutputRoute[];
  engines: ConnectedEngine[];
  coordinator: CoordinatorRuntime | null;
  /** Whether the input ROUTER reports disconnects per identity (see liveness.ts). */
  detectsVanishedEngines: boolean;
  /** 0 when heartbeats are off. */
  heartbeatTimeoutMs: number;
  sentinelAttributionWindowMs: number;
  vanishGraceMs: number;
}

export class ZmqEngineTransport implements EngineTransport {
  readonly inputAddress: string;
  readonly outputAddress: string;
  readonly engines: readonly ConnectedEngine[];
  readonly coordinator: CoordinatorLink | null;
  readonly #parts: TransportParts;
  readonly #inputQueue: SerialSendQueue;
  readonly #byIndex = new Map<number, ConnectedEngine>();
  readonly #byHex = new Map<string, ConnectedEngine>();
  readonly #deadReasons = new Map<number, string>();
  readonly #pendingDeaths: [number | null, string][] = [];
  readonly #deaths: DeathAttribution;
  readonly #loops: Promise<void>[] = [];
  // Pending receives do not keep a Node thread alive; an open transport does, until close().
  readonly #keepAlive = setInterval(() => undefined, KEEP_ALIVE_PERIOD_MS);
  #sink: OutputSink | undefined;
  #closing: Promise<void> | undefined;

  constructor(parts: TransportParts) {
    this.#parts = parts;
    this.inputAddress = parts.inputAddress;
    this.outputAddress = parts.engines[0]?.outputAddress ?? parts.outputs[0]!.address;
    this.engines = Object.freeze([...parts.engines]);
    this.coordinator = parts.coordinator;
    this.#inputQueue = new SerialSendQueue(parts.input);
    for (const engine of parts.engines) {
      this.#byIndex.set(engine.index, engine);
      this.#byHex.set(identityHex(engine.identity), engine);
    }
    const heartbeat =
      parts.heartbeatTimeoutMs > 0 ? `, or it missed ZMTP heartbeats for ${parts.heartbeatTimeoutMs} ms` : "";
    this.#deaths = new DeathAttribution({
      report: (engineIndex, reason) => this.#reportDead(engineIndex, reason),
      isDead: (engineIndex) => this.#deadReasons.has(engineIndex),
      vanishReason: `its connection closed without ENGINE_CORE_DEAD (process exited, was killed or crashed${heartbeat})`,
      windowMs: parts.sentinelAttributionWindowMs,
      graceMs: parts.vanishGraceMs,
    });
    if (!parts.detectsVanishedEngines) {
      process.emitWarning(
        "This libzmq build lacks ZMQ_ROUTER_NOTIFY (draft API): engines that vanish without ENGINE_CORE_DEAD " +
          "are only noticed when a send to them fails.",
        { code: "VLLM_TRANSPORT_NO_VANISH_DETECTION" },
      );
    }
    this.#loops.push(this.#watchInput());
    parts.coordinator?.start((reason) => this.#reportDead(null, reason));
  }

  startOutputLoop(sink: OutputSink): void {
    if (this.#closing !== undefined) throw new ClientClosedError({ detail: "the transport was closed" });
    if (this.#sink !== undefined) throw new TransportUsageError({ detail: "startOutputLoop() called twice" });
    this.#sink = sink;
    for (const [index, reason] of this.#pendingDeaths.splice(0))
      this.#deliver(() => sink.onEngineDead(index, reason));
    for (const route of this.#parts.outputs) this.#loops.push(this.#readOutputs(route, sink));
  }

  send(engineIndex: number, frames: readonly Uint8Array[]): Promise<void> {
    if (this.#closing !== undefined) {
      return Promise.reject(new ClientClosedError({ detail: "the transport was closed" }));
    }
    const engine = this.#byIndex.get(engineIndex);
    if (engine === undefined) {
      return Promise.reject(
        new InvalidDataParallelRankError({ rank: engineIndex, engineIndices: [...this.#byIndex.keys()] }),
      );
    }
    const deadReason = this.#deadReasons.get(engineIndex);
    if (deadReason !== undefined)
      return Promise.reject(new EngineDeadError({ engineIndex, reason: deadReason }));
    if (frames.length === 0) {
      return Promise.reject(
        new TransportUsageError({ detail: "send() needs at least the request-type frame" }),
      );
    }
    return this.#inputQueue.send([engine.identity, ...frames]).catch((error: unknown) => {
      // ROUTER_MANDATORY: the engine's route is gone (it vanished before the notification was handled), or
      // (EAGAIN, the send is tried once: see connect.ts) its pipe is being torn down; queues are unlimited, so
      // nothing else makes a send to a live engine wait.
      const code = (error as { code?: unknown }).code;
      if (code === "EHOSTUNREACH" || code === "EAGAIN") {
        throw new EngineDeadError({
          engineIndex,
          reason:
            code === "EHOSTUNREACH"
              ? "its input connection is gone (send: host unreachable)"
              : "its input connection is closing (send: the connection can take nothing more)",
        });
      }
      throw error;
    });
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearInterval(this.#keepAlive);
      this.#deaths.close();
      this.#inputQueue.close(new ClientClosedError({ detail: "the transport was closed" }));
      this.#parts.coordinator?.stop();
      await this.#parts.sockets.closeAll();
      await Promise.allSettled(this.#loops);
    })();
    return this.#closing;
  }

  async #readOutputs(route: OutputRoute, sink: OutputSink): Promise<void> {
    const output = route.socket;
    const senders = this.engines.filter((engine) => engine.outputAddress === route.address);
    const senderIndices = senders.map((engine) => engine.index);
    for (;;) {
      let frames: Buffer[];
      try {
        frames = await output.receive();
      } catch (error) {
        if (this.#closing === undefined && !output.closed) {
          // Only the engines pushing to this socket lose their outputs.
          const reason = `its output socket ${route.address} failed (${describe(error)})`;
          for (const engine of senders) this.#reportDead(engine.index, reason);
        }
        return;
      }
      if (this.#closing !== undefined) return;
      if (isEngineCoreDead(frames)) {
        this.#deaths.onSentinel(senders);
        continue;
      }
      // Routing read only: the full decode happens once, where the outputs are consumed.
      const read = readOutputRoute(frames[0]!);
      if (read.complete) {
        this.#deliver(() => sink.onOutputs(read, frames, senderIndices));
      } else {
        const protocolError = undecodable(frames);
        this.#deliver(() => sink.onBadMessage(protocolError, frames, senderIndices));
      }
    }
  }

  /** Reads the input ROUTER after startup: only disconnect notifications arrive there. */
  async #watchInput(): Promise<void> {
    const { input } = this.#parts;
    for (;;) {
      let frames: Buffer[];
      try {
        frames = await input.receive();
      } catch {
        return; // closed
      }
      const identity = disconnectedIdentity(frames);
      const engine = identity === undefined ? undefined : this.#byHex.get(identityHex(identity));
      if (engine === undefined || this.#closing !== undefined) continue;
      this.#deaths.onDisconnect(engine);
    }
  }

  #reportDead(engineIndex: number | null, reason: string): void {
    if (this.#closing !== undefined) return;
    if (engineIndex !== null) {
      if (this.#deadReasons.has(engineIndex)) return;
      this.#deadReasons.set(engineIndex, reason);
    }
    const sink = this.#sink;
    if (sink === undefined) this.#pendingDeaths.push([engineIndex, reason]);
    else this.#deliver(() => sink.onEngineDead(engineIndex, reason));
  }

  /** A throwing sink is a bug in the caller: keep the loop alive, surface the error as uncaught. */
  #deliver(call: () => void): void {
    try {
      call();
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}
