import type * as zmq from "zeromq";

/** Settles like `promise`, or rejects with the signal's reason as soon as it aborts. Leaves no listener. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * One bounded receive: resolves with the next message, rejects with `onTimeout()` after `timeoutMs` or with the
 * signal's reason on abort. The timer and the abort listener are removed whichever way it ends. A receive
 * left pending by a timeout/abort is settled when the caller closes the socket (its rejection is absorbed).
 */
export function receiveWithin(
  socket: zmq.Socket & { receive(): Promise<Buffer[]> },
  timeoutMs: number,
  signal: AbortSignal | undefined,
  onTimeout: () => Error,
  /** A receive already started on `socket` (zeromq.js allows one at a time): wait for it instead. */
  inFlight?: Promise<Buffer[]>,
): Promise<Buffer[]> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<Buffer[]>((resolve, reject) => {
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      settle();
    };
    const onAbort = () => finish(() => reject(signal?.reason));
    const timer = setTimeout(() => finish(() => reject(onTimeout())), timeoutMs);
    signal?.addEventListener("abort", onAbort, { once: true });
    (inFlight ?? socket.receive()).then(
      (frames) => finish(() => resolve(frames)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}
