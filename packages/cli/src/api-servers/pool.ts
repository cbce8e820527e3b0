// `serve --api-server-count N`: the main thread's server is the first API server; this starts the N-1 others,
// each on a worker thread attached to the same connection (worker.ts), and is their one owner on the main
// thread: their start (every one listening, or the first failure), their metrics (one /metrics over all),
// their failure (one that dies ends `serve`, as one of vLLM's API servers does), and their graceful close.
import { Worker } from "node:worker_threads";
import { aggregateMetrics, type MetricsSnapshot } from "@vllm-engine-core/metrics";
import { CliRuntimeError } from "../errors.js";
import type { ApiServerData, FromApiServer, ToApiServer } from "./messages.js";

/** How long one server may take to hand over its metrics snapshot. */
const SNAPSHOT_TIMEOUT_MS = 10_000;
/** How long a server may take to close (its streams are cut, so this is a safety net, not a drain time). */
const CLOSE_TIMEOUT_MS = 15_000;

const WORKER_URL = new URL("./worker.js", import.meta.url);

interface Member {
  index: number;
  worker: Worker;
  exited: Promise<void>;
}

export class ApiServerPool {
  readonly #members: Member[] = [];
  readonly #snapshots = new Map<number, { resolve(s: MetricsSnapshot): void; reject(e: Error): void }>();
  #nextId = 0;
  #closing = false;
  #failed: (error: Error) => void = () => {};
  /** Rejects when a server fails or exits before close(): `serve` ends with that error. */
  readonly failure: Promise<never>;

  private constructor(private readonly ownSnapshot: (() => Promise<MetricsSnapshot>) | undefined) {
    this.failure = new Promise<never>((_resolve, reject) => {
      this.#failed = reject;
    });
    this.failure.catch(() => {});
  }

  /**
   * Starts one worker per entry of `servers` and resolves once every one listens; if one fails first, the
   * others are closed and this rejects with its error. `ownSnapshot`: the main thread's server's metrics.
   */
  static async start(
    servers: readonly ApiServerData[],
    ownSnapshot: (() => Promise<MetricsSnapshot>) | undefined,
    signal: AbortSignal,
  ): Promise<ApiServerPool> {
    const pool = new ApiServerPool(ownSnapshot);
    const listening = servers.map((data) => pool.#spawn(data));
    const aborted = new Promise<never>((_resolve, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    try {
      await Promise.race([Promise.all(listening), pool.failure, aborted]);
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  #spawn(data: ApiServerData): Promise<void> {
    const worker = new Worker(WORKER_URL, { workerData: data, name: `api-server-${data.index}` });
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    this.#members.push({ index: data.index, worker, exited });
    const fail = (detail: string) => {
      if (this.#closing) return;
      this.#failed(new CliRuntimeError(`API server ${data.index} (a worker thread) ${detail}; serve stops`));
    };
    worker.on("error", (error) => fail(`failed: ${error.message}`));
    worker.on("exit", (code) => fail(`exited (code ${code})`));
    return new Promise<void>((resolve) => {
      worker.on("message", (message: FromApiServer) => {
        switch (message.kind) {
          case "listening":
            resolve();
            return;
          case "snapshot": {
            const waiter = this.#snapshots.get(message.id);
            this.#snapshots.delete(message.id);
            if (message.snapshot !== undefined) waiter?.resolve(message.snapshot);
            else waiter?.reject(new Error(`API server ${data.index}: ${message.error}`));
            return;
          }
          case "exposition":
            this.exposition().then(
              (text) => this.#post(worker, { kind: "exposition", id: message.id, text }),
              (error: Error) =>
                this.#post(worker, { kind: "exposition", id: message.id, error: error.message }),
            );
            return;
          case "closed":
            return;
        }
      });
    });
  }

  #post(worker: Worker, message: ToApiServer): void {
    try {
      worker.postMessage(message);
    } catch {
      // The worker is gone: its exit is reported through `failure`.
    }
  }

  #snapshotOf(member: Member): Promise<MetricsSnapshot> {
    const id = this.#nextId++;
    return new Promise<MetricsSnapshot>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#snapshots.delete(id);
        reject(
          new Error(`API server ${member.index} did not hand over its metrics in ${SNAPSHOT_TIMEOUT_MS} ms`),
        );
      }, SNAPSHOT_TIMEOUT_MS);
      this.#snapshots.set(id, {
        resolve: (s) => {
          clearTimeout(timer);
          resolve(s);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.#post(member.worker, { kind: "snapshot", id });
    });
  }

  /** Every server's metrics (the main thread's and each worker's), combined: what any /metrics answers. */
  async exposition(): Promise<string> {
    const snapshots = await Promise.all([
      this.ownSnapshot?.() ?? Promise.resolve([]),
      ...this.#members.map((member) => this.#snapshotOf(member)),
    ]);
    return aggregateMetrics(snapshots);
  }

  /** Closes every worker's server (its open streams cut, their requests aborted) and waits for each exit. */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all(
      this.#members.map(async (member) => {
        this.#post(member.worker, { kind: "close" });
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<"late">((resolve) => {
          timer = setTimeout(() => resolve("late"), CLOSE_TIMEOUT_MS);
        });
        const outcome = await Promise.race([member.exited.then(() => "exited" as const), late]);
        clearTimeout(timer);
        // These threads never load zeromq (the runtime thread owns every socket), so terminate() is safe.
        if (outcome === "late") await member.worker.terminate();
      }),
    );
  }
}
