// The main-thread host: the only place that spawns runtime workers. A worker's child threads die with it,
// so the runtime must be a child of the main thread for a connection opened from a worker thread to outlive
// that thread. The host takes every thread's lanes (rendezvous.ts) and passes each one on to a runtime
// worker; it spawns, watches (ready, load, retirement, crash, exit), refs and unrefs them, and closes their
// sockets on process exit.
//
// Nothing is installed until it is needed: the main thread gets its host on its first connect or attach,
// or from installRuntimeHost() (what a process whose worker threads connect first calls on its main thread).
import { isMainThread, type MessagePort, Worker } from "node:worker_threads";
import {
  ClientClosedError,
  RuntimeCrashedError,
  type SerializedError,
  serializeError,
} from "@vllm-engine-core/errors";
import {
  type HostToRuntime,
  RENDEZVOUS,
  type RendezvousMessage,
  type RuntimeToHost,
  type RuntimeWorkerData,
  type ToThread,
} from "../messages.js";
import { RUNTIME_WORKER_MARKER, RUNTIME_WORKER_MARKER_VALUE } from "../runtime-marker.js";
import { EXIT_CLOSE_WAIT_MS, RETIRE_TIMEOUT_MS } from "../timing.js";
import { newId } from "./ids.js";
import { runtimeWorkerUrl } from "./worker-url.js";

interface RuntimeEntry {
  readonly gen: string;
  readonly worker: Worker;
  state: "starting" | "ready" | "retiring";
  readonly ready: Promise<void>;
  /** Open connections and connects in progress, as last reported by the runtime. */
  busy: boolean;
  /** Why the runtime crashed (its own report or the worker's error event). */
  crash: string | undefined;
  readonly exitFlag: Int32Array;
  retireTimer: NodeJS.Timeout | undefined;
}

/** How a generation ended: what a lane that asks for it is told. */
type Fate = SerializedError;

const FATES_KEPT = 256;

export class RuntimeHost {
  #current: RuntimeEntry | undefined;
  readonly #alive = new Map<string, RuntimeEntry>();
  readonly #fates = new Map<string, Fate>();
  #exitHandlerInstalled = false;

  /**
   * Passes a thread's lane on to a runtime: generation `gen` (attach), or the live one, spawned if none
   * accepts work (connect). A lane that cannot be served is told why on the lane itself.
   */
  acceptLane(port: MessagePort, gen: string | null): void {
    if (gen !== null) {
      const entry = this.#alive.get(gen);
      if (entry !== undefined && entry.state !== "retiring") this.#forward(entry, port);
      else refuse(port, this.#fates.get(gen) ?? retiredFate());
      return;
    }
    const entry = this.#current ?? this.#spawn();
    entry.ready.then(
      () => this.#forward(entry, port),
      (error: unknown) => refuse(port, serializeError(error)),
    );
  }

  /** Tests only: make the current runtime throw an uncaught error (needs VLLM_ENGINE_CORE_TEST_HOOKS=1). */
  crashForTesting(reason: string): string | undefined {
    const entry = this.#current;
    if (entry === undefined) return undefined;
    entry.worker.postMessage({ t: "crash", reason } satisfies HostToRuntime);
    return entry.gen;
  }

  #forward(entry: RuntimeEntry, port: MessagePort): void {
    try {
      entry.worker.postMessage({ t: "lane", port } satisfies HostToRuntime, [port]);
    } catch {
      // The thread closed its lane while the runtime started (a cancelled connect): nothing to pass on.
    }
  }

  #spawn(): RuntimeEntry {
    this.#closeRuntimesOnExit();
    const gen = newId();
    const exitFlag = new SharedArrayBuffer(4);
    const workerData: RuntimeWorkerData & Record<string, unknown> = {
      [RUNTIME_WORKER_MARKER]: RUNTIME_WORKER_MARKER_VALUE,
      gen,
      exitFlag,
      testHooks: process.env.VLLM_ENGINE_CORE_TEST_HOOKS === "1",
    };
    // The bundle needs no loader or resolution flags; inheriting the caller's (tsx, test runners, custom
    // conditions) would only slow the start down or change how zeromq resolves.
    const worker = new Worker(runtimeWorkerUrl(), { workerData, execArgv: [] });
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    // Nobody may be awaiting `ready` when the worker fails; the lanes waiting for it are told.
    ready.catch(() => {});
    const entry: RuntimeEntry = {
      gen,
      worker,
      state: "starting",
      ready,
      busy: false,
      crash: undefined,
      exitFlag: new Int32Array(exitFlag),
      retireTimer: undefined,
    };
    this.#current = entry;
    this.#alive.set(gen, entry);

    worker.on("message", (message: RuntimeToHost) => {
      switch (message.t) {
        case "ready":
          if (entry.state === "starting") entry.state = "ready";
          markReady();
          break;
        case "load":
          entry.busy = message.open > 0 || message.connecting > 0;
          break;
        case "crashed":
          entry.crash ??= message.reason;
          this.#retiring(entry);
          break;
        case "retiring":
          this.#retiring(entry);
          break;
      }
      this.#updateRef(entry);
    });
    worker.on("error", (error) => {
      entry.crash ??= `${error.name}: ${error.message}`;
    });
    worker.on("exit", (code) => {
      const reason = entry.crash ?? `the runtime worker exited with code ${code}`;
      failReady(new RuntimeCrashedError({ reason: `the runtime worker did not start (${reason})` }));
      const retired = entry.state === "retiring" && entry.crash === undefined;
      this.#ended(entry, retired ? retiredFate() : serializeError(new RuntimeCrashedError({ reason })));
    });
    return entry;
  }

  /**
   * The runtime keeps the process alive while it has connections open or in progress, and while it starts
   * or retires; an idle runtime (no sockets) does not, and is safe to tear down with the process.
   */
  #updateRef(entry: RuntimeEntry): void {
    if (entry.state === "ready" && !entry.busy) entry.worker.unref();
    else entry.worker.ref();
  }

  #retiring(entry: RuntimeEntry): void {
    entry.state = "retiring";
    if (this.#current === entry) this.#current = undefined;
    if (entry.retireTimer !== undefined) return;
    // The worker closes its sockets and ends by itself; terminate() is the fallback only, because
    // terminating a thread that loaded zeromq can abort the process.
    entry.retireTimer = setTimeout(() => void entry.worker.terminate(), RETIRE_TIMEOUT_MS);
    entry.retireTimer.unref();
  }

  #ended(entry: RuntimeEntry, fate: Fate): void {
    if (entry.retireTimer !== undefined) clearTimeout(entry.retireTimer);
    if (this.#current === entry) this.#current = undefined;
    this.#alive.delete(entry.gen);
    this.#fates.set(entry.gen, fate);
    const oldest = this.#fates.keys().next();
    if (this.#fates.size > FATES_KEPT && !oldest.done) this.#fates.delete(oldest.value);
  }

  /**
   * Exiting (process.exit() on this thread, an uncaught exception, a signal handler that exits) with a
   * connection open or a connect in flight would tear the runtime down with live sockets; zeromq.js then
   * rejects their pending receives from a finalizer, cannot create the JS error there and aborts the
   * process. On exit, ask every runtime to close its sockets and block (bounded) until it did: the
   * runtime's event loop runs on its own thread while this one waits. Installed with the first runtime.
   */
  #closeRuntimesOnExit(): void {
    if (this.#exitHandlerInstalled) return;
    this.#exitHandlerInstalled = true;
    process.on("exit", () => {
      const deadline = Date.now() + EXIT_CLOSE_WAIT_MS;
      // Every live runtime: its load report may still be in flight, and an idle one answers at once.
      const waiting = [...this.#alive.values()];
      for (const entry of waiting) entry.worker.postMessage({ t: "exit" } satisfies HostToRuntime);
      for (const entry of waiting) {
        const left = deadline - Date.now();
        if (left > 0) Atomics.wait(entry.exitFlag, 0, 0, left);
      }
    });
  }
}

function retiredFate(): Fate {
  return serializeError(new ClientClosedError({ detail: "the connection was shut down" }));
}

/** Tells the lane's thread why no runtime takes it; that thread closes the lane. */
function refuse(port: MessagePort, error: SerializedError): void {
  port.postMessage({ t: "gone", error } satisfies ToThread);
}

// ---------------------------------------------------------------------------------------------------
// The process's one host (even if two copies of this package are loaded on the main thread).

const HOST_KEY = Symbol.for(RENDEZVOUS);

/** The main thread's host, installed on first use. Throws on any other thread. */
export function runtimeHost(): RuntimeHost {
  if (!isMainThread) throw new Error("the runtime host lives on the main thread");
  const slot = globalThis as unknown as Record<symbol, RuntimeHost | undefined>;
  let host = slot[HOST_KEY];
  if (host === undefined) {
    const installed = new RuntimeHost();
    host = installed;
    slot[HOST_KEY] = installed;
    // Worker threads reach the host with postMessageToThread(0, …) (rendezvous.ts). This listener holds no
    // handle: it never keeps the process alive by itself.
    process.on("workerMessage", (message: unknown) => {
      if (isRendezvous(message)) installed.acceptLane(message.port, message.gen);
    });
  }
  return host;
}

function isRendezvous(message: unknown): message is RendezvousMessage {
  return (
    typeof message === "object" &&
    message !== null &&
    (message as { t?: unknown }).t === RENDEZVOUS &&
    typeof (message as { port?: unknown }).port === "object"
  );
}

/**
 * Installs the runtime host on the main thread, so that worker threads can open connections before the main
 * thread opens or attaches one itself (the main thread's first connect or attach installs it anyway). Call
 * it on the main thread; it does nothing on a worker thread, and nothing the second time.
 */
export function installRuntimeHost(): void {
  if (isMainThread) runtimeHost();
}
