// `serve --api-server-count N`: the main thread's server is the first API server; this starts the N-1 others,
// each on a worker thread attached to the same connection (worker.ts), and is their one owner on the main
// thread: their start (every one listening, or the first failure), their metrics (one /metrics over all),
// their failure (one that dies ends `serve`, as one of vLLM's API servers does), and their graceful close.
import { Worker } from "node:worker_threads";
import { aggregateMetrics, type MetricsSnapshot } from "@vllm-engine-core/metrics";
import { CliRuntimeError } from "../errors.js";
import type { ApiServerData, FromApiServer, ToApiServer } from "./messages.js";

/** How long the servers may take to listen (a thread start, module loading and a tokenizer: ~1 s here). */
const START_TIMEOUT_MS = 60_000;
/** How long one live server may take to hand over its metrics snapshot (a scrape waits this at most). */
const SNAPSHOT_TIMEOUT_MS = 3_000;
/** How long a server may take to close (its streams are cut, so this is a safety net, not a drain time). */
const CLOSE_TIMEOUT_MS = 15_000;

const WORKER_URL = new URL("./worker.js", import.meta.url);

/** What to try when a further API server fails (its own error is the `cause`). */
const ADVICE = "rerun with --verbose for its stack, or serve with --api-server-count 1";

interface Member {
  readonly index: number;
  readonly worker: Worker;
  readonly exited: Promise<void>;
  listening: boolean;
  /** Exited: asked for nothing more, and its open snapshot requests settle at once. */
  gone: boolean;
  /** Snapshot requests sent to this server and not yet answered, by id. */
  readonly pending: Map<number, (snapshot: MetricsSnapshot | Error) => void>;
}

export class ApiServerPool {
  readonly #members: Member[] = [];
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
   * start takes longer than START_TIMEOUT_MS or `signal` aborts, the started ones are closed and this rejects.
   * `ownSnapshot`: the main thread's server's metrics.
   */
  static async start(
    servers: readonly ApiServerData[],
    ownSnapshot: (() => Promise<MetricsSnapshot>) | undefined,
    signal: AbortSignal,
  ): Promise<ApiServerPool> {
    signal.throwIfAborted();
    const pool = new ApiServerPool(ownSnapshot);
    const listening = servers.map((data) => pool.#spawn(data));
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      timer = setTimeout(() => {
        const waiting = pool.#members.filter((m) => !m.listening).map((m) => m.index);
        reject(
          new CliRuntimeError(
            `API server${waiting.length === 1 ? "" : "s"} ${waiting.join(", ")} did not start listening in ` +
              `${START_TIMEOUT_MS / 1000} s; serve stops: ${ADVICE}`,
          ),
        );
      }, START_TIMEOUT_MS);
    });
    try {
      await Promise.race([Promise.all(listening), pool.failure, stopped]);
    } catch (error) {
      await pool.close();
      throw error;
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
    }
    return pool;
  }

  #spawn(data: ApiServerData): Promise<void> {
    const worker = new Worker(WORKER_URL, { workerData: data, name: `api-server-${data.index}` });
    const member: Member = {
      index: data.index,
      worker,
      exited: new Promise<void>((resolve) => worker.once("exit", () => resolve())),
      listening: false,
      gone: false,
      pending: new Map(),
    };
    this.#members.push(member);
    const fail = (detail: string, cause?: unknown) => {
      if (this.#closing) return;
      this.#failed(
        new CliRuntimeError(`API server ${data.index} (a worker thread) ${detail}; serve stops: ${ADVICE}`, {
          cause,
        }),
      );
    };
    worker.on("error", (error) => fail(`failed: ${error.message}`, error));
    worker.on("exit", (code) => {
      member.gone = true;
      // A scrape waiting on this server goes on without it (its counters are gone with it).
      for (const settle of member.pending.values()) settle([]);
      member.pending.clear();
      fail(`exited (code ${code})`);
    });
    return new Promise<void>((resolve) => {
      worker.on("message", (message: FromApiServer) => {
        switch (message.kind) {
          case "listening":
            member.listening = true;
            resolve();
            return;
          case "snapshot": {
            const settle = member.pending.get(message.id);
            member.pending.delete(message.id);
            settle?.(
              message.snapshot ?? new Error(`API server ${data.index} gave no metrics: ${message.error}`),
            );
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
      // The worker is gone: its exit settles what waits on it and is reported through `failure`.
    }
  }

  #snapshotOf(member: Member): Promise<MetricsSnapshot> {
    if (member.gone) return Promise.resolve([]);
    const id = this.#nextId++;
    return new Promise<MetricsSnapshot>((resolve, reject) => {
      const timer = setTimeout(() => {
        member.pending.delete(id);
        reject(
          new CliRuntimeError(
            `API server ${member.index} did not hand over its metrics in ${SNAPSHOT_TIMEOUT_MS} ms`,
          ),
        );
      }, SNAPSHOT_TIMEOUT_MS);
      // A scrape in flight never keeps the process alive.
      timer.unref();
      member.pending.set(id, (answer) => {
        clearTimeout(timer);
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      });
      this.#post(member.worker, { kind: "snapshot", id });
    });
  }

  /** Every server's metrics (the main thread's and each live worker's), combined: what any /metrics answers. */
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
        if (member.gone) return;
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
