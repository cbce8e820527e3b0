import type * as zmq from "zeromq";

/**
 * zeromq.js allows one in-flight send per socket (EBUSY otherwise), so every send on a socket goes through
 * one FIFO. A failed send rejects only its own promise; the queue keeps going.
 */
export class SerialSendQueue {
  readonly #socket: zmq.Writable;
  #tail: Promise<unknown> = Promise.resolve();
  #closedWith: Error | undefined;

  constructor(socket: zmq.Writable) {
    this.#socket = socket;
  }

  send(frames: readonly Uint8Array[]): Promise<void> {
    if (this.#closedWith !== undefined) return Promise.reject(this.#closedWith);
    const run = this.#tail.then(async () => {
      if (this.#closedWith !== undefined) throw this.#closedWith;
      try {
        await this.#socket.send(frames as Uint8Array[]);
      } catch (error) {
        // A send interrupted by close() reports the closing reason, not libzmq's EAGAIN/ENOTSOCK.
        throw this.#closedWith ?? error;
      }
    });
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Every queued and later send rejects with `reason`. */
  close(reason: Error): void {
    this.#closedWith ??= reason;
  }
}
