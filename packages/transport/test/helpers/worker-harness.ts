// Host side of the test runtime worker: a real worker thread started with the runtime marker.
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { deserializeError } from "@vllm-engine-core/errors";
import { RUNTIME_WORKER_MARKER, RUNTIME_WORKER_MARKER_VALUE } from "../../src/guard.ts";
import type { ConnectResult, WorkerCommand, WorkerEvent, WorkerMessage } from "../worker/protocol.ts";

export const TEST_WORKER_PATH = fileURLToPath(
  new URL("../../dist/test-worker/transport-worker.js", import.meta.url),
);

export function runtimeWorkerData(): Record<string, unknown> {
  return { [RUNTIME_WORKER_MARKER]: RUNTIME_WORKER_MARKER_VALUE };
}

export class TransportWorker {
  readonly events: WorkerEvent[] = [];
  readonly exited: Promise<number>;
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly #waiters = new Set<() => void>();
  #nextId = 1;

  constructor(workerData: unknown = runtimeWorkerData()) {
    this.#worker = new Worker(TEST_WORKER_PATH, { workerData });
    this.#worker.on("message", (message: WorkerMessage) => {
      if (message.type === "reply") {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (message.ok) pending?.resolve(message.value);
        else pending?.reject(deserializeError(message.error));
      } else {
        const { type: _type, ...event } = message;
        this.events.push(event as WorkerEvent);
        for (const wake of [...this.#waiters]) wake();
      }
    });
    this.exited = new Promise((resolve, reject) => {
      this.#worker.once("exit", resolve);
      this.#worker.once("error", reject);
    });
  }

  request<T = unknown>(command: WorkerCommand): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#worker.postMessage({ id, command });
    });
  }

  connect(command: Omit<Extract<WorkerCommand, { op: "connect" }>, "op">): Promise<ConnectResult> {
    return this.request<ConnectResult>({ op: "connect", ...command });
  }

  /** First event (past or future) matching `predicate`. */
  waitForEvent<E extends WorkerEvent>(
    predicate: (event: WorkerEvent) => event is E,
    timeoutMs = 10_000,
  ): Promise<E> {
    return new Promise<E>((resolve, reject) => {
      const check = () => {
        const found = this.events.find(predicate);
        if (found === undefined) return false;
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(found);
        return true;
      };
      const wake = () => void check();
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        reject(
          new Error(
            `no matching worker event within ${timeoutMs} ms; events: ${JSON.stringify(this.events)}`,
          ),
        );
      }, timeoutMs);
      if (!check()) this.#waiters.add(wake);
    });
  }

  /** Asks the worker to close everything and end by itself; resolves with its exit code. */
  async exit(): Promise<number> {
    await this.request({ op: "exit" }).catch(() => undefined);
    return this.exited;
  }
}

export const isDead = (e: WorkerEvent): e is Extract<WorkerEvent, { kind: "dead" }> => e.kind === "dead";
export const isOutputs = (e: WorkerEvent): e is Extract<WorkerEvent, { kind: "outputs" }> =>
  e.kind === "outputs";
export const isBad = (e: WorkerEvent): e is Extract<WorkerEvent, { kind: "bad" }> => e.kind === "bad";
