// Flow control for the replay engine: the frontends under test bind their output PULL with an unlimited
// receive queue (like vLLM), so a producer faster than the consumer would fill memory. Each consumer
// publishes how many tokens it has delivered in a small file (8-byte little-endian float64 at offset 0);
// the replay engine keeps at most `window` messages beyond that in flight.
import { closeSync, openSync, readSync, writeSync } from "node:fs";

/** Consumers publish once per this many engine steps' worth of tokens (a pwrite each; cheap, not free). */
export const CREDIT_STEPS = 4;

export class CreditWriter {
  readonly #fd: number;
  readonly #buf = Buffer.alloc(8);
  readonly #every: number;
  #delivered = 0;
  #written = 0;

  /** Publishes at most once per `every` delivered tokens (one pwrite per engine step's worth). */
  constructor(path: string, every: number) {
    this.#fd = openSync(path, "r+");
    this.#every = Math.max(1, every);
  }

  add(tokens: number): void {
    this.#delivered += tokens;
    if (this.#delivered - this.#written >= this.#every) this.flush();
  }

  flush(): void {
    this.#written = this.#delivered;
    this.#buf.writeDoubleLE(this.#delivered, 0);
    writeSync(this.#fd, this.#buf, 0, 8, 0);
  }

  close(): void {
    closeSync(this.#fd);
  }
}

export class CreditReader {
  readonly #fd: number;
  readonly #buf = Buffer.alloc(8);

  constructor(path: string) {
    this.#fd = openSync(path, "r");
  }

  delivered(): number {
    readSync(this.#fd, this.#buf, 0, 8, 0);
    return this.#buf.readDoubleLE(0);
  }

  close(): void {
    closeSync(this.#fd);
  }
}
