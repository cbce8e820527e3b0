// The runtime workers' life, seen from the main thread: the only place that spawns them. A worker's child
// threads die with it, so the runtime must be a child of the main thread for a connection opened from a
// worker thread to outlive that thread. This module spawns, watches (ready, load, retirement, crash, exit),
// refs and unrefs them, and closes their sockets on process exit; how threads ask it for a runtime and learn
// that one ended is the rendezvous (rendezvous.ts), which owns the process's one supervisor.
import { Worker } from "node:worker_threads";
import { RuntimeCrashedError, serializeError } from "@vllm-engine-core/errors";
import { RUNTIME_PROTOCOL_VERSION, RUNTIME_WORKER_MARKER } from "@vllm-engine-core/protocol";
import type {
  RuntimeFate,
  RuntimeToSupervisor,
  RuntimeWhereabouts,
  RuntimeWorkerData,
  SupervisorToRuntime,
} from "../messages.js";
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

const FATES_KEPT = 256;

export class RuntimeSupervisor {
  private current: RuntimeEntry | undefined;
  private readonly alive = new Map<string, RuntimeEntry>();
  private readonly fates = new Map<string, RuntimeFate>();

  private readonly onEnded: (gen: string, fate: RuntimeFate) => void;

  /** `onEnded` runs once per generation, when its worker has exited. */
  constructor(onEnded: (gen: string, fate: RuntimeFate) => void) {
    this.onEnded = onEnded;
  }

  /** The generation of a ready runtime, spawning one if none is accepting work. */
  async ensure(): Promise<string> {
    const entry = this.current ?? this.spawn();
    await entry.ready;
    return entry.gen;
  }

  /** Whether a generation still accepts work, or how it ended. */
  locate(gen: string): RuntimeWhereabouts {
    const entry = this.alive.get(gen);
    if (entry !== undefined && entry.state !== "retiring") return { alive: true };
    return { alive: false, fate: this.fates.get(gen) ?? { kind: "retired" } };
  }

  /** Tests only: make the current runtime throw an uncaught error (needs VLLM_ENGINE_CORE_TEST_HOOKS=1). */
  crashForTesting(reason: string): string | undefined {
    const entry = this.current;
    if (entry === undefined) return undefined;
    entry.worker.postMessage({ t: "crash", reason } satisfies SupervisorToRuntime);
    return entry.gen;
  }

  /**
   * Exiting (process.exit() on this thread, an uncaught exception, a signal handler that exits) with a
   * connection open or a connect in flight would tear the runtime down with live sockets; zeromq.js then
   * rejects their pending receives from a finalizer, cannot create the JS error there and aborts the
   * process. On exit, ask every runtime to close its sockets and block (bounded) until it did: the
   * runtime's event loop runs on its own thread while this one waits. A retired runtime flagged itself
   * socket-free already, so its (possibly ended) thread is not waited for.
   */
  closeRuntimesOnExit(): void {
    process.on("exit", () => {
      const deadline = Date.now() + EXIT_CLOSE_WAIT_MS;
      // Every live runtime: its load report may still be in flight, and an idle one answers at once.
      const waiting = [...this.alive.values()];
      for (const entry of waiting) entry.worker.postMessage({ t: "exit" } satisfies SupervisorToRuntime);
      for (const entry of waiting) {
        const left = deadline - Date.now();
        if (left > 0) Atomics.wait(entry.exitFlag, 0, 0, left);
      }
    });
  }

  private spawn(): RuntimeEntry {
    const gen = newId();
    const exitFlag = new SharedArrayBuffer(4);
    const workerData: RuntimeWorkerData & Record<string, unknown> = {
      [RUNTIME_WORKER_MARKER]: RUNTIME_PROTOCOL_VERSION,
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
    // Nobody may be awaiting `ready` when the worker fails; the rejection still reaches ensure() callers.
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
    this.current = entry;
    this.alive.set(gen, entry);

    worker.on("message", (message: RuntimeToSupervisor) => {
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
          this.retiring(entry);
          break;
        case "retiring":
          this.retiring(entry);
          break;
      }
      this.updateRef(entry);
    });
    worker.on("error", (error) => {
      entry.crash ??= `${error.name}: ${error.message}`;
    });
    worker.on("exit", (code) => {
      const reason = entry.crash ?? `the runtime worker exited with code ${code}`;
      failReady(new RuntimeCrashedError({ reason: `the runtime worker did not start (${reason})` }));
      const retired = entry.state === "retiring" && entry.crash === undefined;
      this.ended(entry, retired ? { kind: "retired" } : crashedFate(reason));
    });
    return entry;
  }

  /**
   * The runtime keeps the process alive while it has connections open or in progress, and while it starts
   * or retires; an idle runtime (no sockets) does not, and is safe to tear down with the process.
   */
  private updateRef(entry: RuntimeEntry): void {
    if (entry.state === "ready" && !entry.busy) entry.worker.unref();
    else entry.worker.ref();
  }

  private retiring(entry: RuntimeEntry): void {
    entry.state = "retiring";
    if (this.current === entry) this.current = undefined;
    if (entry.retireTimer !== undefined) return;
    // The worker closes its sockets and ends by itself; terminate() is the fallback only, because
    // terminating a thread that loaded zeromq can abort the process.
    entry.retireTimer = setTimeout(() => void entry.worker.terminate(), RETIRE_TIMEOUT_MS);
    entry.retireTimer.unref();
  }

  private ended(entry: RuntimeEntry, fate: RuntimeFate): void {
    if (entry.retireTimer !== undefined) clearTimeout(entry.retireTimer);
    if (this.current === entry) this.current = undefined;
    this.alive.delete(entry.gen);
    this.fates.set(entry.gen, fate);
    const oldest = this.fates.keys().next();
    if (this.fates.size > FATES_KEPT && !oldest.done) this.fates.delete(oldest.value);
    this.onEnded(entry.gen, fate);
  }
}

function crashedFate(reason: string): RuntimeFate {
  return { kind: "crashed", error: serializeError(new RuntimeCrashedError({ reason })) };
}
