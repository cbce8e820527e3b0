// Timing constants of the thread machinery, in one place so the README and the code agree.

/** How long a worker thread waits for the main-thread host to acknowledge a rendezvous request. */
export const HOST_ACK_TIMEOUT_MS = 2_000;
/** How long a thread waits for a runtime's welcome before asking the host whether it still exists. */
export const WELCOME_TIMEOUT_MS = 2_000;
/** How often a sentinel beats. */
export const HEARTBEAT_INTERVAL_MS = 200;
/**
 * How long the exiting main thread waits (blocked) for the runtimes to close their sockets. Measured (2 cores):
 * under 5 ms with connects in flight or connections open, 35–55 ms for a runtime still starting; the bound
 * only matters for a runtime blocked in synchronous code.
 */
export const EXIT_CLOSE_WAIT_MS = 2_000;
/** How long the runtime waits for a retiring worker to end by itself before terminate(). */
export const RETIRE_TIMEOUT_MS = 5_000;
/** How long openConnection waits for the runtime to confirm a cancelled connect before giving up on it. */
export const CANCEL_CONFIRM_TIMEOUT_MS = 5_000;
/** How many times a call that hit a retiring runtime is retried on a fresh one. */
export const RETIRING_RETRIES = 5;
/** The runtime declares a non-main thread dead when its sentinel has not beaten for this long. */
export const STALE_AFTER_MS = 2_000;
/** How often the runtime checks the sentinels. */
export const LIVENESS_CHECK_MS = 250;
/** A runtime with no connection and no connect in progress for this long retires. */
export const IDLE_RETIRE_MS = 3_000;
