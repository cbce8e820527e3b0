// The runtime service on the worker thread: accepts thread links on its control channel, serves their
// calls, watches their liveness, and ends itself once it has nothing left to serve.
import { BroadcastChannel, parentPort, workerData } from "node:worker_threads";
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
  controlChannelName,
  type Hello,
  type RuntimeToSupervisor,
  type RuntimeWorkerData,
  receive,
  retiringError,
  type SupervisorToRuntime,
  type ToRuntime,
} from "../messages.js";
import { IDLE_RETIRE_MS, LIVENESS_CHECK_MS } from "../timing.js";
import { ConnectionService } from "./connection.js";
import type { ConnectEngines } from "./engine-io.js";
import { ThreadPeer } from "./peer.js";

/** One handler per call of CallMap; each must answer with its own call's result type. */
type CallHandlers = { [K in CallName]: (peer: ThreadPeer, call: CallMessage<K>) => Promise<CallResult<K>> };

export class RuntimeService {
  private readonly gen: string;
  private readonly connectEngines: ConnectEngines;
  private readonly control: BroadcastChannel;
  private readonly peers = new Map<string, ThreadPeer>();
  private readonly connections = new Map<string, ConnectionService>();
  private connecting = 0;
  /** Every connect in progress (also those whose thread is gone), settled once its sockets are closed. */
  private readonly connectsInFlight = new Map<AbortController, Promise<unknown>>();
  private nextConnection = 1;
  private retiring = false;
  private crashed = false;
  private hadWork = false;
  /** Ref'd: this timer is what keeps the runtime thread alive until it retires. */
  private readonly liveness: NodeJS.Timeout;
  /** Shared with the supervisor: 1 once this thread has no socket and will open none (see socketsGone). */
  private readonly exitFlag: Int32Array;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(connectEngines: ConnectEngines) {
    const data: RuntimeWorkerData = workerData;
    this.gen = data.gen;
    this.connectEngines = connectEngines;
    this.control = new BroadcastChannel(controlChannelName(this.gen));
    receive<Hello>(this.control, (hello) => this.onHello(hello));
    this.control.unref();
    this.liveness = setInterval(() => this.checkLiveness(), LIVENESS_CHECK_MS);
    this.exitFlag = new Int32Array(data.exitFlag);
    this.listenToSupervisor(data.testHooks);
    // A bug must not tear the thread down with live sockets (zeromq would abort the whole process):
    // close them, report the crash and end by ourselves.
    process.on("uncaughtException", (error) => this.crash(error));
    this.toSupervisor({ t: "ready" });
    this.scheduleIdleRetire();
  }

  // ---- links --------------------------------------------------------------------------------

  private onHello(hello: Hello): void {
    if (hello?.t !== "hello") return;
    const existing = this.peers.get(hello.link);
    if (existing !== undefined && existing.ringId === hello.ringId) {
      existing.post({ t: "welcome" }); // the same link saying hello again
      return;
    }
    // A new link of a thread whose old one this runtime still holds: the old one's reader is gone.
    if (existing !== undefined) void this.peerGone(existing);
    const peer = new ThreadPeer(
      hello.threadKey,
      hello.link,
      hello.heartbeat,
      hello.ring,
      hello.ringId,
      (message) => this.onLinkMessage(peer, message),
    );
    this.peers.set(hello.link, peer);
    peer.post({ t: "welcome" });
  }

  private onLinkMessage(peer: ThreadPeer, message: ToRuntime): void {
    if (peer.gone) return;
    switch (message.t) {
      case "cancel":
        peer.connects.get(message.id)?.abort(new ConnectAbortedError({ detail: "cancelled by the caller" }));
        peer.utilityCalls
          .get(message.id)
          ?.abort(new ClientClosedError({ detail: "the caller aborted the call" }));
        return;
      case "adopt":
        this.connections.get(message.connectionId)?.adopt();
        return;
      case "bye":
        void this.peerGone(peer);
        return;
      case "undecodable": {
        const error = deserializeError(message.error);
        this.connections.get(message.c)?.onForwardedUndecodable(peer, {
          ...message,
          error:
            error instanceof ProtocolError
              ? error
              : new ProtocolError({ struct: "EngineCoreOutputs", detail: error.message }),
        });
        return;
      }
      default:
        this.serve(peer, message);
    }
  }

  /** Answers call `K` with its handler's result: generic in the call, so the reply is typed by CallMap. */
  private serve<K extends CallName>(peer: ThreadPeer, call: CallMessage<K>): void {
    const { t, id } = call;
    this.handlers[t](peer, call).then(
      (value) => peer.reply<K>({ t: "ok", call: t, id, value }),
      (error: unknown) => peer.reply<K>({ t: "err", call: t, id, error: serializeError(error) }),
    );
  }

  private readonly handlers: CallHandlers = {
    connect: async (peer, call) => this.connect(peer, call),
    attach: async (peer, call) => {
      if (this.retiring) throw retiringError();
      return this.connection(call.connectionId).attach(peer);
    },
    submit: async (peer, call) => this.connection(call.connectionId).submit(peer, call),
    abort: async (peer, call) => this.connection(call.connectionId).abort(peer, call.requestIds),
    utility: async (peer, call) => this.callUtility(peer, this.connection(call.connectionId), call),
    diagnostics: async (peer, call) => this.connection(call.connectionId).diagnostics(peer),
    detach: async (peer, call) => {
      await this.connections.get(call.connectionId)?.detach(peer);
      return null;
    },
    shutdown: async (_peer, call) => {
      await this.connections.get(call.connectionId)?.shutdown();
      return null;
    },
  };

  private connection(connectionId: string): ConnectionService {
    const connection = this.connections.get(connectionId);
    if (connection === undefined) throw new ClientClosedError({ detail: "the connection was shut down" });
    return connection;
  }

  private async callUtility(
    peer: ThreadPeer,
    connection: ConnectionService,
    call: CallMessage<"utility">,
  ): Promise<CallResult<"utility">> {
    const controller = new AbortController();
    peer.utilityCalls.set(call.id, controller);
    try {
      return await connection.callUtility(peer, call.method, call.args, {
        timeoutMs: call.timeoutMs,
        signal: controller.signal,
      });
    } finally {
      peer.utilityCalls.delete(call.id);
    }
  }

  // ---- connect ------------------------------------------------------------------------------

  private async connect(peer: ThreadPeer, call: CallMessage<"connect">): Promise<CallResult<"connect">> {
    if (this.retiring) throw retiringError();
    this.hadWork = true;
    this.clearIdleRetire();
    const controller = new AbortController();
    peer.connects.set(call.id, controller);
    this.connecting++;
    this.reportLoad();
    try {
      const connecting = this.connectEngines(call.config, controller.signal);
      this.connectsInFlight.set(
        controller,
        connecting.catch(() => undefined),
      );
      const io = await connecting;
      if (controller.signal.aborted || peer.gone) {
        await io.close();
        throw controller.signal.reason ?? new ConnectAbortedError({ detail: "the connecting thread exited" });
      }
      const id = `${this.gen}:${this.nextConnection++}`;
      const connection = new ConnectionService(id, io, call.config, peer, (closed) =>
        this.connectionClosed(closed),
      );
      this.connections.set(id, connection);
      io.startOutputLoop(connection);
      return connection.attachResult();
    } finally {
      this.connectsInFlight.delete(controller);
      peer.connects.delete(call.id);
      this.connecting--;
      this.reportLoad();
      this.maybeRetire();
    }
  }

  private connectionClosed(connection: ConnectionService): void {
    if (this.connections.get(connection.id) === connection) this.connections.delete(connection.id);
    this.reportLoad();
    this.maybeRetire();
  }

  // ---- liveness -----------------------------------------------------------------------------

  private checkLiveness(): void {
    const now = performance.now();
    for (const peer of this.peers.values()) {
      if (!peer.isStale(now)) continue;
      // Dead threads do not read this; a thread that was only starved of CPU learns that it lost its link.
      peer.post({ t: "evicted" });
      void this.peerGone(peer);
    }
  }

  /** A thread exited (or stopped beating): cancel its connects, abort its requests, drop its link. */
  private async peerGone(peer: ThreadPeer): Promise<void> {
    if (peer.gone) return;
    peer.close();
    this.peers.delete(peer.linkName);
    for (const controller of peer.connects.values()) {
      controller.abort(new ConnectAbortedError({ detail: "the connecting thread exited" }));
    }
    for (const controller of peer.utilityCalls.values()) {
      controller.abort(new ClientClosedError({ detail: "the calling thread exited" }));
    }
    await Promise.allSettled([...peer.connections].map((connection) => connection.peerGone(peer)));
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  private reportLoad(): void {
    this.toSupervisor({ t: "load", open: this.connections.size, connecting: this.connecting });
  }

  private maybeRetire(): void {
    if (this.retiring || this.connections.size > 0 || this.connecting > 0) return;
    if (this.hadWork) this.retire();
    else this.scheduleIdleRetire();
  }

  /** A runtime that was spawned but never asked to connect (its requester died) ends after a while. */
  private scheduleIdleRetire(): void {
    this.clearIdleRetire();
    this.idleTimer = setTimeout(() => this.maybeRetireIdle(), IDLE_RETIRE_MS);
  }

  private maybeRetireIdle(): void {
    this.idleTimer = undefined;
    if (!this.retiring && this.connections.size === 0 && this.connecting === 0) this.retire();
  }

  private clearIdleRetire(): void {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /**
   * Nothing left to serve: refuse new work, close every handle this thread holds and let the event loop
   * drain, so the thread ends by itself (terminate() on a thread that loaded zeromq can abort the process).
   */
  private retire(announce = true): void {
    if (this.retiring) return;
    this.retiring = true;
    if (announce) this.toSupervisor({ t: "retiring" });
    // A retiring runtime opens nothing new; without sockets, its thread may end before an exit request.
    if (this.connections.size === 0 && this.connectsInFlight.size === 0) this.socketsGone();
    clearInterval(this.liveness);
    this.clearIdleRetire();
    this.control.close();
    // Peers still linked get the retirement answer for a moment longer, then their links close too.
    setTimeout(() => {
      for (const peer of this.peers.values()) peer.close();
      this.peers.clear();
    }, 50).unref();
  }

  private crash(error: unknown): void {
    if (this.crashed) return;
    this.crashed = true;
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.toSupervisor({ t: "crashed", reason });
    // The main-thread host tells every thread (RuntimeCrashedError); here only the sockets matter.
    this.retire(false);
    void this.closeAllSockets(new RuntimeCrashedError({ reason })).finally(() => this.socketsGone());
  }

  /**
   * Closes every socket of this thread: stops the connects in progress (each closes what it opened, as on
   * any abort) and closes the connections. Resolves once no socket is left, so no receive is left pending
   * on one either: zeromq.js rejects a pending receive from its finalizer when the thread is torn down,
   * where no JS error can be created, and the native exception aborts the whole process.
   */
  private async closeAllSockets(reason: Error): Promise<void> {
    for (const controller of this.connectsInFlight.keys()) controller.abort(reason);
    await Promise.allSettled(this.connectsInFlight.values());
    await Promise.allSettled([...this.connections.values()].map((connection) => connection.closeSockets()));
  }

  /**
   * Tells the supervisor's exit handler (blocked in Atomics.wait, or about to be) that this thread can be
   * torn down with the process: it has no socket left and, retiring, will open none.
   */
  private socketsGone(): void {
    Atomics.store(this.exitFlag, 0, 1);
    Atomics.notify(this.exitFlag, 0);
  }

  private toSupervisor(message: RuntimeToSupervisor): void {
    parentPort?.postMessage(message);
  }

  private listenToSupervisor(testHooks: boolean): void {
    parentPort?.on("message", (message: SupervisorToRuntime) => {
      if (message?.t === "exit") {
        // The main thread is blocked until the flag flips: refuse new work (a connect already queued on a
        // link must not open sockets after the flag), close every socket, nothing else.
        this.retire(false);
        void this.closeAllSockets(new ConnectAbortedError({ detail: "the process is exiting" })).finally(() =>
          this.socketsGone(),
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
