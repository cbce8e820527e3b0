// Liveness of a non-main thread. No MessagePort connects a worker thread to the runtime, so the runtime
// cannot see it exit; instead the thread spawns a tiny sentinel child thread that bumps a counter in a
// SharedArrayBuffer the runtime also holds. The sentinel dies with its parent (exit, terminate or crash),
// and keeps beating while the parent is busy-blocked, so a counter that stops moving means the thread is gone.
import { Worker } from "node:worker_threads";
import { HEARTBEAT_INTERVAL_MS } from "../timing.js";

// Plain CommonJS evaluated in the sentinel thread: no imports from this package, starts in a few ms.
const SENTINEL_SOURCE = `
const { workerData } = require("node:worker_threads");
const beat = new Int32Array(workerData.heartbeat);
const tick = () => { Atomics.add(beat, 0, 1); };
tick();
setInterval(tick, workerData.intervalMs);
`;

const START_TIMEOUT_MS = 10_000;

let started: Promise<SharedArrayBuffer> | undefined;

/** The heartbeat slot of this thread's sentinel, starting the sentinel on first use. */
export function threadHeartbeat(): Promise<SharedArrayBuffer> {
  started ??= startSentinel().catch((error: unknown) => {
    started = undefined;
    throw error;
  });
  return started;
}

async function startSentinel(): Promise<SharedArrayBuffer> {
  const heartbeat = new SharedArrayBuffer(4);
  const beat = new Int32Array(heartbeat);
  const sentinel = new Worker(SENTINEL_SOURCE, {
    eval: true,
    workerData: { heartbeat, intervalMs: HEARTBEAT_INTERVAL_MS },
    // Loader flags of the parent (tsx, test runners) are useless here and slow the start down.
    execArgv: [],
  });
  // It must never keep its parent thread alive.
  sentinel.unref();
  let failure: Error | undefined;
  sentinel.on("error", (error) => {
    failure = error;
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Atomics.load(beat, 0) === 0) {
    if (failure !== undefined) throw failure;
    if (Date.now() > deadline) {
      void sentinel.terminate();
      throw new Error(`the liveness sentinel thread did not start within ${START_TIMEOUT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return heartbeat;
}
