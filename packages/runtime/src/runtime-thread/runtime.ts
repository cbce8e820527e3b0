// The runtime service on the worker thread: takes the lanes the host passes on, serves their calls, lets go
// of what a thread held when its lane closes, and ends itself once it has nothing left to serve.
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import {
  ClientClosedError,
  ConnectAbortedError,
  deserializeError,
  RuntimeCrashedError,
  serializeError,
} from "@vllm-engine-core/errors";
import { ProtocolError } from "@vllm-engine-core/protocol";
import {
  type CallMessage,
  type CallName,
  type CallResult,
  type HostToRuntime,
  type RuntimeToHost,
  type RuntimeWorkerData,
  retiringError,
  type ToRuntime,
} from "../messages.js";
import { IDLE_RETIRE_MS } from "../timing.js";
import { ConnectionService } from "./connection.js";
import type { ConnectEngines } from "./engine-io.js";
import { ThreadLane } from "./lane.js";

/** One handler per call of CallMap; each must answer with its own call's result type. */
type CallHandlers = { [K in CallName]: (lane: ThreadLane, call: CallMessage<K>) => Promise<CallResult<K>> };

/** Keeps the runtime thread alive until it retires (its lanes and sockets are not what decides that). */
const KEEP_ALIVE_MS = 2 ** 30;

export class RuntimeService {
  readonly #gen: string;
  readonly #connectEngines: ConnectEngines;
  readonly #lanes = new Set<ThreadLane>();
  readonly #connections = new Map<string, ConnectionService>();
  /** Every connect in progress (also those whose thread is gone), settled once its sockets are closed. */
  readonly #connectsInFlight = new Map<AbortController, Promise<unknown>>();
  #nextConnection = 1;
  #retiring = false;
  #crashed = false;
  #hadWork = false;
  readonly #keepAlive = setInterval(() => {}, KEEP_ALIVE_MS);
  /** Shared with the host: 1 once this thread has no socket and will open none (see socketsGone). */
  readonly #exitFlag: Int32Array;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(connectEngines: ConnectEngines) {
    const data: RuntimeWorkerData = workerData;
    this.#gen = data.gen;
    this.#connectEngines = connectEngines;
    this.#exitFlag = new Int32Array(data.exitFlag);
    this.#listenToHost(data.testHooks);
    // A bug must not tear the thread down with live sockets (zeromq would abort the whole process):
    // close them, report the crash and end by ourselves.
    process.on("uncaughtException", (error) => this.#crash(error));
    this.#toHost({ t: "ready" });
    this.#scheduleIdleRetire();
  }

  // ---- lanes --------------------------------------------------------------------------------

  #acceptLane(port: MessagePort): void {
    const lane: ThreadLane = new ThreadLane(
      port,
      (message) => this.#onLaneMessage(lane, message),
      () => void this.#laneGone(lane),
    );
    if (this.#retiring) {
      // Its connect or attach is answered "retiring" (the thread retries elsewhere), then the lane closes.
      lane.post({ t: "gone", error: serializeError(retiringError()) });
      return;
    }
    this.#lanes.add(lane);
  }

  #onLaneMessage(lane: ThreadLane, message: ToRuntime): void {
    switch (message.t) {
      case "cancel":
        lane.connects.get(message.id)?.abort(new ConnectAbortedError({ detail: "cancelled by the caller" }));
        lane.utilityCalls
          .get(message.id)
          ?.abort(new ClientClosedError({ detail: "the caller aborted the call" }));
        return;
      case "adopt":
        lane.connection?.adopt();
        return;
      case "undecodable": {
        const error = deserializeError(message.error);
        lane.connection?.onForwardedUndecodable(lane, {
          ...message,
          error:
            error instanceof ProtocolError
              ? error
              : new ProtocolError({ struct: "EngineCoreOutputs", detail: error.message }),
        });
        return;
      }
      default:
        this.#serve(lane, message);
    }
  }

  /** Answers call `K` with its handler's result: generic in the call, so the reply is typed by CallMap. */
  #serve<K extends CallName>(lane: ThreadLane, call: CallMessage<K>): void {
    const { t, id } = call;
    this.#handlers[t](lane, call).then(
      (value) => lane.reply<K>({ t: "ok", call: t, id, value }),
      (error: unknown) => lane.reply<K>({ t: "err", call: t, id, error: serializeError(error) }),
    );
  }

  readonly #handlers: CallHandlers = {
    connect: async (lane, call) => this.#connect(lane, call),
    attach: async (lane, call) => {
      if (this.#retiring) throw retiringError();
      const connection = this.#connections.get(call.connectionId);
      if (connection === undefined) throw new ClientClosedError({ detail: "the connection was shut down" });
      return connection.attach(lane);
    },
    submit: async (lane, call) => this.#connectionOf(lane).submit(lane, call),
    abort: async (lane, call) => this.#connectionOf(lane).abort(lane, call.requestIds),
    utility: async (lane, call) => {
      const controller = new AbortController();
      lane.utilityCalls.set(call.id, controller);
      try {
        return await this.#connectionOf(lane).callUtility(lane, call.method, call.args, {
          timeoutMs: call.timeoutMs,
          signal: controller.signal,
        });
      } finally {
        lane.utilityCalls.delete(call.id);
      }
    },
    diagnostics: async (lane) => this.#connectionOf(lane).diagnostics(lane),
    detach: async (lane) => {
      await lane.connection?.detach(lane);
      return null;
    },
    shutdown: async (lane) => {
      await lane.connection?.shutdown();
      return null;
    },
  };

  #connectionOf(lane: ThreadLane): ConnectionService {
    const connection = lane.connection;
    if (connection === undefined) throw new ClientClosedError({ detail: "the connection was shut down" });
    return connection;
  }

  /** A thread's lane closed (it exited, was terminated, or detached): let go of everything it held. */
  async #laneGone(lane: ThreadLane): Promise<void> {
    this.#lanes.delete(lane);
    for (const controller of lane.connects.values()) {
      controller.abort(new ConnectAbortedError({ detail: "the connecting thread exited" }));
    }
    for (const controller of lane.utilityCalls.values()) {
      controller.abort(new ClientClosedError({ detail: "the calling thread exited" }));
    }
    await lane.connection?.laneGone(lane);
  }

  // ---- connect ------------------------------------------------------------------------------

  async #connect(lane: ThreadLane, call: CallMessage<"connect">): Promise<CallResult<"connect">> {
    if (this.#retiring) throw retiringError();
    this.#hadWork = true;
    this.#clearIdleRetire();
    const controller = new AbortController();
    lane.connects.set(call.id, controller);
    this.#reportLoad(1);
    try {
      const connecting = this.#connectEngines(call.config, controller.signal);
      this.#connectsInFlight.set(
        controller,
        connecting.catch(() => undefined),
      );
      const io = await connecting;
      if (controller.signal.aborted || lane.gone) {
        await io.close();
        throw controller.signal.reason ?? new ConnectAbortedError({ detail: "the connecting thread exited" });
      }
      const connectionId = `${this.#gen}:${this.#nextConnection++}`;
      const connection = new ConnectionService(connectionId, io, call.config, lane, (closed) =>
        this.#connectionClosed(closed),
      );
      this.#connections.set(connectionId, connection);
      io.startOutputLoop(connection);
      return connection.attachResult();
    } finally {
      this.#connectsInFlight.delete(controller);
      lane.connects.delete(call.id);
      this.#reportLoad(0);
      this.#maybeRetire();
    }
  }

  #connectionClosed(connection: ConnectionService): void {
    if (this.#connections.get(connection.connectionId) === connection) {
      this.#connections.delete(connection.connectionId);
    }
    this.#reportLoad(0);
    this.#maybeRetire();
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  /** `starting`: a connect that is about to be counted in #connectsInFlight. */
  #reportLoad(starting: number): void {
    const connecting = this.#connectsInFlight.size + starting;
    this.#toHost({ t: "load", open: this.#connections.size, connecting });
  }

  #maybeRetire(): void {
    if (this.#retiring || this.#connections.size > 0 || this.#connectsInFlight.size > 0) return;
    if (this.#hadWork) this.#retire();
    else this.#scheduleIdleRetire();
  }

  /** A runtime that was spawned but never asked to connect (its requester died) ends after a while. */
  #scheduleIdleRetire(): void {
    this.#clearIdleRetire();
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      if (this.#connections.size === 0 && this.#connectsInFlight.size === 0) this.#retire();
    }, IDLE_RETIRE_MS);
  }

  #clearIdleRetire(): void {
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  /**
   * Refuses new work and lets the event loop drain, so the thread ends by itself (terminate() on a thread
   * that loaded zeromq can abort the process). Idempotent: retirement, crash and process exit all end here.
   */
  #retire(announce = true): void {
    if (this.#retiring) return;
    this.#retiring = true;
    if (announce) this.#toHost({ t: "retiring" });
    // A retiring runtime opens nothing new; without sockets, its thread may end before an exit request.
    if (this.#connections.size === 0 && this.#connectsInFlight.size === 0) this.#socketsGone();
    clearInterval(this.#keepAlive);
    this.#clearIdleRetire();
    // Lanes still open (a connect or attach that raced with the retirement) are told to go elsewhere; after
    // the replies already on their way (a failed connect's error is settled in this tick's microtasks).
    setImmediate(() => {
      const retiring = serializeError(retiringError());
      for (const lane of this.#lanes) {
        if (lane.connection === undefined) lane.post({ t: "gone", error: retiring });
        lane.close();
      }
      this.#lanes.clear();
    });
  }

  #crash(error: unknown): void {
    if (this.#crashed) return;
    this.#crashed = true;
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.#toHost({ t: "crashed", reason });
    // Every thread hears it on its lanes, before they close.
    const crashed = serializeError(new RuntimeCrashedError({ reason }));
    for (const lane of this.#lanes) lane.post({ t: "gone", error: crashed });
    this.#retire(false);
    void this.#closeAllSockets(new RuntimeCrashedError({ reason })).finally(() => this.#socketsGone());
  }

  /**
   * Closes every socket of this thread: stops the connects in progress (each closes what it opened, as on
   * any abort) and closes the connections. Resolves once no socket is left, so no receive is left pending
   * on one either: zeromq.js rejects a pending receive from its finalizer when the thread is torn down,
   * where no JS error can be created, and the native exception aborts the whole process.
   */
  async #closeAllSockets(reason: Error): Promise<void> {
    for (const controller of this.#connectsInFlight.keys()) controller.abort(reason);
    await Promise.allSettled(this.#connectsInFlight.values());
    await Promise.allSettled([...this.#connections.values()].map((connection) => connection.closeSockets()));
  }

  /**
   * Tells the host's exit handler (blocked in Atomics.wait, or about to be) that this thread can be torn
   * down with the process: it has no socket left and, retiring, will open none.
   */
  #socketsGone(): void {
    Atomics.store(this.#exitFlag, 0, 1);
    Atomics.notify(this.#exitFlag, 0);
  }

  #toHost(message: RuntimeToHost): void {
    parentPort?.postMessage(message);
  }

  #listenToHost(testHooks: boolean): void {
    parentPort?.on("message", (message: HostToRuntime) => {
      if (message?.t === "lane") {
        this.#acceptLane(message.port);
      } else if (message?.t === "exit") {
        // The main thread is blocked until the flag flips: refuse new work (a connect already queued on a
        // lane must not open sockets after the flag), close every socket, nothing else.
        this.#retire(false);
        void this.#closeAllSockets(new ConnectAbortedError({ detail: "the process is exiting" })).finally(
          () => this.#socketsGone(),
        );
      } else if (message?.t === "crash" && testHooks) {
        setImmediate(() => {
          throw new Error(message.reason);
        });
      }
    });
    // Listening must not keep the thread alive.
    parentPort?.unref();
  }
}
