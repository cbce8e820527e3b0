// Timing constants of the thread machinery, in one place so the README and the code agree.

/**
 * How long a worker thread's rendezvous waits for the main-thread host to take its lane: past it, the main
 * thread has no host (RuntimeHostUnavailableError) or is blocked.
 */
export const HOST_DELIVERY_TIMEOUT_MS = 2_000;
/**
 * How long the exiting main thread waits (blocked) for the runtimes to close their sockets. Measured (2 cores):
 * under 5 ms with connects in flight or connections open, 35–55 ms for a runtime still starting; the bound
 * only matters for a runtime blocked in synchronous code.
 */
export const EXIT_CLOSE_WAIT_MS = 2_000;
/** How long the host waits for a retiring runtime worker to end by itself before terminate(). */
export const RETIRE_TIMEOUT_MS = 5_000;
/** How long openConnection waits for the runtime to confirm a cancelled connect before giving up on it. */
export const CANCEL_CONFIRM_TIMEOUT_MS = 5_000;
/** How many times a connect that hit a retiring runtime is retried on a fresh one. */
export const RETIRING_RETRIES = 5;
/** A runtime with no connection and no connect in progress for this long retires. */
export const IDLE_RETIRE_MS = 3_000;
