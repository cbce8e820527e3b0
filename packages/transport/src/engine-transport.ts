import {
  ClientClosedError,
  decodeOutputMessage,
  EngineDeadError,
  InvalidDataParallelRankError,
  ProtocolError,
} from "@vllm-engine-core/protocol";
import type * as zmq from "zeromq";
import type { CoordinatorRuntime } from "./coordinator.js";
import { TransportUsageError } from "./errors.js";
import { describeIndices, identityHex } from "./identity.js";
import { disconnectedIdentity } from "./liveness.js";
import { SerialSendQueue } from "./send-queue.js";
import { describe, type SocketSet } from "./sockets.js";
import type { ConnectedEngine, CoordinatorLink, EngineTransport, OutputSink } from "./types.js";

/**
 * After a disconnect notification, wait this long before reporting the engine dead, so outputs it pushed
 * just before dying (they travel on the other socket, the output PULL) reach the sink first.
 */
export const VANISH_GRACE_MS = 50;

/**
 * An ENGINE_CORE_DEAD sentinel on an output socket that several live engines share names no engine. vLLM's
 * engine exits right after sending it, so the engine whose input connection drops within this window is the
 * sender; if none does, every live engine on that socket is reported dead (what vLLM's own clients do).
 */
export const SENTINEL_ATTRIBUTION_WINDOW_MS = 5000;

/** setInterval's maximum period; the interval only exists to hold the thread open. */
const KEEP_ALIVE_PERIOD_MS = 2 ** 31 - 1;

const SENTINEL_REASON = "the engine sent ENGINE_CORE_DEAD (a fatal error inside the engine; see its log)";

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
  heartbeatTimeoutMs: number;
}

/** A sentinel on a shared output socket, waiting for its sender to disconnect. */
interface UnattributedSentinel {
  readonly engines: readonly ConnectedEngine[];
  readonly timer: NodeJS.Timeout;
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
  readonly #graceTimers = new Set<NodeJS.Timeout>();
  readonly #pendingDeaths: [number | null, string][] = [];
  readonly #unattributed = new Set<UnattributedSentinel>();
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
      // ROUTER_MANDATORY: the engine's route is gone (it vanished before the notification was handled).
      if ((error as { code?: unknown }).code === "EHOSTUNREACH") {
        throw new EngineDeadError({
          engineIndex,
          reason: "its input connection is gone (send: host unreachable)",
        });
      }
      throw error;
    });
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearInterval(this.#keepAlive);
      for (const timer of this.#graceTimers) clearTimeout(timer);
      this.#graceTimers.clear();
      for (const pending of this.#unattributed) clearTimeout(pending.timer);
      this.#unattributed.clear();
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
    for (;;) {
      let frames: Buffer[];
      try {
        frames = await output.receive();
      } catch (error) {
        if (this.#closing === undefined && !output.closed) {
          this.#reportDead(null, `the output socket failed (${describe(error)})`);
        }
        return;
      }
      if (this.#closing !== undefined) return;
      let message: ReturnType<typeof decodeOutputMessage>;
      try {
        message = decodeOutputMessage(frames);
      } catch (error) {
        const protocolError =
          error instanceof ProtocolError
            ? error
            : new ProtocolError({ struct: "EngineCoreOutputs", detail: describe(error) });
        this.#deliver(() => sink.onBadMessage(protocolError, frames));
        continue;
      }
      if (message.kind === "dead") {
        this.#onSentinel(senders);
      } else {
        this.#deliver(() => sink.onOutputs(message.outputs, frames));
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
      if (this.#attributeSentinelTo(engine)) continue;
      const heartbeat =
        this.#parts.heartbeatTimeoutMs > 0
          ? `, or it missed ZMTP heartbeats for ${this.#parts.heartbeatTimeoutMs} ms`
          : "";
      const reason = `its connection closed without ENGINE_CORE_DEAD (process exited, was killed or crashed${heartbeat})`;
      const timer = setTimeout(() => {
        this.#graceTimers.delete(timer);
        this.#reportDead(engine.index, reason);
      }, VANISH_GRACE_MS);
      this.#graceTimers.add(timer);
    }
  }

  /** The sentinel carries no engine index: the socket it came on names the engine unless several share it. */
  #onSentinel(senders: readonly ConnectedEngine[]): void {
    const live = senders.filter((engine) => !this.#deadReasons.has(engine.index));
    if (live.length <= 1) {
      if (live.length === 1) this.#reportDead(live[0]!.index, SENTINEL_REASON);
      return;
    }
    const pending: UnattributedSentinel = {
      engines: live,
      timer: setTimeout(() => {
        this.#unattributed.delete(pending);
        const reason =
          `an ENGINE_CORE_DEAD sentinel arrived on the output socket shared by ${describeIndices(live.map((e) => e.index))} ` +
          `and none of them disconnected within ${SENTINEL_ATTRIBUTION_WINDOW_MS} ms, so it names no single engine and ` +
          "every one of them is considered dead (see the engines' logs)";
        for (const engine of live) this.#reportDead(engine.index, reason);
      }, SENTINEL_ATTRIBUTION_WINDOW_MS),
    };
    this.#unattributed.add(pending);
  }

  /** A disconnect that follows an unattributed sentinel names its sender: report the sentinel's reason now. */
  #attributeSentinelTo(engine: ConnectedEngine): boolean {
    for (const pending of this.#unattributed) {
      if (!pending.engines.includes(engine)) continue;
      clearTimeout(pending.timer);
      this.#unattributed.delete(pending);
      // The sentinel is the engine's last output message and it has been read: nothing left to drain.
      this.#reportDead(
        engine.index,
        `${SENTINEL_REASON}; attributed by its input connection closing right after`,
      );
      return true;
    }
    return false;
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
