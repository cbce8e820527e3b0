// The runtime's end of one thread's lane (a MessagePort; the thread holds the other end), and what the
// runtime keeps for it: the connection it serves (set by its first call, connect or attach) and that
// thread's connects and utility calls in progress. The port emits `close` when the thread exits, is
// terminated, or closes the lane: that is how the runtime learns a thread is gone.
import type { MessagePort } from "node:worker_threads";
import type { CallName, CallReply, ToRuntime, ToThread } from "../messages.js";
import type { ConnectionService } from "./connection.js";

export class ThreadLane {
  /** The connection this lane serves, once its connect or attach succeeded. */
  connection: ConnectionService | undefined;
  /** Pending connect calls of this lane, by call id. */
  readonly connects = new Map<number, AbortController>();
  /** Pending utility calls of this lane, by call id (cancelled when the caller's signal aborts). */
  readonly utilityCalls = new Map<number, AbortController>();
  readonly #port: MessagePort;
  #gone = false;

  constructor(port: MessagePort, onMessage: (message: ToRuntime) => void, onClose: () => void) {
    this.#port = port;
    // A structured clone is untyped: ToRuntime is the contract of both ends (messages.ts).
    port.on("message", (message: ToRuntime) => {
      if (!this.#gone) onMessage(message);
    });
    port.on("close", () => {
      if (this.#gone) return;
      this.#gone = true;
      onClose();
    });
    // The runtime's own keep-alive decides its lifetime, not its lanes.
    port.unref();
  }

  get gone(): boolean {
    return this.#gone;
  }

  /** `transfer`: buffers that only this message needs (they move instead of being copied). */
  post(message: ToThread, transfer?: ArrayBuffer[]): void {
    if (!this.#gone) this.#port.postMessage(message, transfer);
  }

  /** The answer to call `K`: generic in the call, so its value must be that call's result (CallMap). */
  reply<K extends CallName>(reply: CallReply<K>): void {
    if (!this.#gone) this.#port.postMessage(reply);
  }

  /** The runtime is done with the lane (retired); the thread sees it close. */
  close(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#port.close();
  }
}
