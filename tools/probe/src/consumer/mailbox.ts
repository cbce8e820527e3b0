// Main-thread side of a helper worker that answers with typed `{ type, ... }` messages: `expect(type)`
// waits for the next message and checks its type; a worker error fails every wait.
import type { Worker } from "node:worker_threads";

type Tagged = { type: string };
type ErrorMessage = { type: "error"; message: string; stack: string | undefined };

export class WorkerMailbox<From extends Tagged, To extends { type: "close" } | Tagged> {
  readonly worker: Worker;
  readonly #inbox: From[] = [];
  readonly #waiters: ((m: From | ErrorMessage) => void)[] = [];
  #failure: Error | undefined;
  /** Settles when the worker exits (also when it did before anyone waited for it). */
  readonly #exited: Promise<unknown>;

  /** `intercept` sees every message first; returning true keeps it out of the inbox. */
  constructor(worker: Worker, intercept: (m: From) => boolean = () => false) {
    this.worker = worker;
    this.#exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.on("message", (m: From | ErrorMessage) => {
      if (m.type === "error") {
        const e = m as ErrorMessage;
        this.#failure = new Error(`consumer thread: ${e.message}`);
        if (e.stack !== undefined) this.#failure.stack = e.stack;
      } else if (intercept(m as From)) {
        return;
      }
      const waiter = this.#waiters.shift();
      if (waiter) waiter(m);
      else this.#inbox.push(m as From);
    });
    worker.on("error", (e) => {
      this.#failure = e;
      for (const w of this.#waiters.splice(0)) w({ type: "error", message: e.message, stack: e.stack });
    });
  }

  send(message: To): void {
    this.worker.postMessage(message);
  }

  async expect<T extends From["type"]>(type: T): Promise<Extract<From, { type: T }>> {
    // A worker that already failed sends nothing more: waiting would never end.
    if (this.#inbox.length === 0 && this.#failure) throw this.#failure;
    const m =
      this.#inbox.shift() ??
      (await new Promise<From | ErrorMessage>((resolve) => this.#waiters.push(resolve)));
    if (m.type === "error" || this.#failure) throw this.#failure ?? new Error("consumer thread failed");
    if (m.type !== type) throw new Error(`consumer thread: expected "${type}", got "${m.type}"`);
    return m as Extract<From, { type: T }>;
  }

  /** Asks the worker to close (`{ type: "close" }`), waits for its `closed` reply and its exit. */
  async close(): Promise<void> {
    this.send({ type: "close" } as To);
    await this.expect("closed" as From["type"]).catch(() => undefined);
    await this.#exited;
  }
}
