// At most N tasks at once; the others start in arrival order as slots free. The tokenizer runs every native
// encode through one (Infinity when no bound is given; `maxConcurrentEncodes`, `serve
// --renderer-num-workers`), so a burst of long prompts takes at most N of libuv's pool threads (shared with
// fs and dns) and at most N cores away from the event loop and the engine, as vLLM's renderer thread pool
// bounds its tokenization.
import { InvalidTextOptionsError } from "./errors.js";

export class ConcurrencyLimit {
  readonly limit: number;
  #running = 0;
  /** Waiting starts, oldest at #head (a slot is handed straight to the oldest waiter). */
  #waiting: (() => void)[] = [];
  #head = 0;

  /** `limit`: a positive integer, or Infinity for no bound. `field` names the option in an error. */
  constructor(limit: number, field = "limit") {
    if (!(limit === Number.POSITIVE_INFINITY || (Number.isInteger(limit) && limit >= 1))) {
      throw new InvalidTextOptionsError({ field, detail: `must be a positive integer, got ${limit}` });
    }
    this.limit = limit;
  }

  /** Tasks started and not yet settled. */
  get running(): number {
    return this.#running;
  }

  /** Tasks waiting for a slot. */
  get waiting(): number {
    return this.#waiting.length - this.#head;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running < this.limit) this.#running++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #release(): void {
    if (this.#head === this.#waiting.length) {
      this.#running--;
      return;
    }
    // The slot passes to the oldest waiter: `running` stays the same.
    const next = this.#waiting[this.#head]!;
    this.#waiting[this.#head++] = undefined as unknown as () => void;
    if (this.#head === this.#waiting.length) {
      this.#waiting = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#waiting.length) {
      // A standing backlog: drop the started part so the array does not grow for ever.
      this.#waiting = this.#waiting.slice(this.#head);
      this.#head = 0;
    }
    next();
  }
}
