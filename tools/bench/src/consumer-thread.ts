// Main-thread side of the bench's consumer worker: typed waits for its messages.
import { Worker } from "node:worker_threads";
import type { FromConsumer, ToConsumer } from "./consumer-protocol.js";

export class ConsumerThread {
  readonly worker: Worker;
  readonly #inbox: FromConsumer[] = [];
  readonly #waiters: ((m: FromConsumer) => void)[] = [];
  #failure: Error | undefined;
  /** Called for every "phase" message as it arrives (CPU sampling at window edges). */
  onPhase: (phase: string) => void = () => undefined;

  constructor() {
    this.worker = new Worker(new URL("./consumer-worker.js", import.meta.url));
    this.worker.on("message", (m: FromConsumer) => {
      if (m.type === "phase") {
        this.onPhase(m.phase);
        return;
      }
      if (m.type === "error") {
        this.#failure = new Error(`consumer thread: ${m.message}`);
        if (m.stack !== undefined) this.#failure.stack = m.stack;
      }
      const waiter = this.#waiters.shift();
      if (waiter) waiter(m);
      else this.#inbox.push(m);
    });
    this.worker.on("error", (e) => {
      this.#failure = e;
      for (const w of this.#waiters.splice(0)) w({ type: "error", message: e.message, stack: e.stack });
    });
  }

  send(message: ToConsumer): void {
    this.worker.postMessage(message);
  }

  async expect<T extends FromConsumer["type"]>(type: T): Promise<Extract<FromConsumer, { type: T }>> {
    const m =
      this.#inbox.shift() ?? (await new Promise<FromConsumer>((resolve) => this.#waiters.push(resolve)));
    if (m.type === "error" || this.#failure) throw this.#failure ?? new Error("consumer thread failed");
    if (m.type !== type) throw new Error(`consumer thread: expected "${type}", got "${m.type}"`);
    return m as Extract<FromConsumer, { type: T }>;
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.worker.once("exit", resolve));
    this.send({ type: "close" });
    await this.expect("closed").catch(() => undefined);
    await exited;
  }
}
