// The one way a caller-side wait gives up when the caller's AbortSignal fires.

/**
 * `promise`, or the signal's reason as soon as the signal aborts (at once when it already has); then
 * `onAbort` runs once (e.g. to tell the runtime). The promise may still settle later; that outcome is dropped.
 */
export function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  onAbort?: () => void,
): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      promise.catch(() => {});
      onAbort?.();
      reject(signal.reason);
    };
    if (signal.aborted) {
      abort();
      return;
    }
    signal.addEventListener("abort", abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
