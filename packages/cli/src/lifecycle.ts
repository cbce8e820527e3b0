// Ctrl-C and cleanup. SIGINT/SIGTERM abort one AbortSignal that every pending operation of the command
// observes (connect, streams, utility calls, the bench's timers); whatever the command started registers a
// cleanup that runs once, last registered first, however the command ends. A second Ctrl-C while cleaning up
// forces the exit (cleanups still get their `force` pass: the mock engine is SIGKILLed, never orphaned).
import { CliInterruptedError, EXIT_INTERRUPTED } from "./errors.js";

export interface Cleanup {
  /** Graceful close (awaited). */
  close(): Promise<void>;
  /** Immediate, synchronous last resort on a forced exit. */
  force?(): void;
}

export class Lifecycle {
  readonly #controller = new AbortController();
  readonly #cleanups: Cleanup[] = [];
  #cleaning: Promise<void> | undefined;
  readonly #onSignal = (signal: NodeJS.Signals) => this.#interrupt(signal);

  constructor() {
    process.on("SIGINT", this.#onSignal);
    process.on("SIGTERM", this.#onSignal);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get interrupted(): boolean {
    return this.#controller.signal.aborted;
  }

  /** Registers something to close when the command ends; returns it for chaining. */
  add<T extends Cleanup>(cleanup: T): T {
    this.#cleanups.push(cleanup);
    return cleanup;
  }

  /** Throws the interruption if Ctrl-C was pressed. */
  check(): void {
    this.#controller.signal.throwIfAborted();
  }

  #interrupt(signal: NodeJS.Signals): void {
    if (!this.#controller.signal.aborted) {
      this.#controller.abort(new CliInterruptedError(signal));
      return;
    }
    // Second signal: stop waiting for graceful closes.
    for (const cleanup of [...this.#cleanups].reverse()) {
      try {
        cleanup.force?.();
      } catch {
        // best effort: the process is exiting
      }
    }
    process.exit(EXIT_INTERRUPTED);
  }

  /** Runs every cleanup once (latest first); errors in one do not stop the others. */
  close(): Promise<void> {
    this.#cleaning ??= (async () => {
      while (this.#cleanups.length > 0) {
        const cleanup = this.#cleanups.pop()!;
        try {
          await cleanup.close();
        } catch {
          // The command's own outcome is what the user sees; a failing close must not hide it.
        }
      }
      process.off("SIGINT", this.#onSignal);
      process.off("SIGTERM", this.#onSignal);
    })();
    return this.#cleaning;
  }
}

/** Settles like `promise`, or rejects with the signal's reason as soon as it is aborted. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** setTimeout as a promise that rejects with the signal's reason when aborted. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
