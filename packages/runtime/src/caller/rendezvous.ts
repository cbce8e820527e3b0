// The rendezvous: how any thread hands a new lane to the runtime. The main-thread host (host.ts) takes it:
// the main thread calls it directly; a worker thread posts the lane's runtime end to the main thread with
// postMessageToThread, which fails at once when the main thread has no host listening.
import { isMainThread, postMessageToThread } from "node:worker_threads";
import { RuntimeHostUnavailableError } from "@vllm-engine-core/errors";
import { RENDEZVOUS, type RendezvousMessage } from "../messages.js";
import { HOST_DELIVERY_TIMEOUT_MS } from "../timing.js";
import { runtimeHost } from "./host.js";
import { Lane } from "./lane.js";

/**
 * A new lane to generation `gen` (attach) or to the live runtime, spawned if none runs (connect, `gen`
 * null). Calls may be made on it at once (they wait in the port until the runtime reads them); the promise
 * rejects with RuntimeHostUnavailableError when no host took the lane.
 */
export async function openLane(gen: string | null): Promise<Lane> {
  const lane = new Lane();
  if (isMainThread) {
    runtimeHost().acceptLane(lane.remote, gen);
    return lane;
  }
  const message: RendezvousMessage = { t: RENDEZVOUS, port: lane.remote, gen };
  // Holds this thread while the host is asked: the delivery promise alone does not keep it alive.
  const release = lane.hold();
  try {
    await postMessageToThread(0, message, [lane.remote], HOST_DELIVERY_TIMEOUT_MS);
    return lane;
  } catch (error) {
    const unavailable = new RuntimeHostUnavailableError({
      detail:
        `the main thread did not take this thread's connection request (${(error as Error).message}). ` +
        "The runtime must be spawned by the main thread so that it outlives worker threads: call " +
        "installRuntimeHost() (from @vllm-engine-core/client or @vllm-engine-core/runtime) on the main thread " +
        "before connecting from a worker thread, and keep the main thread's event loop responsive",
    });
    lane.close(unavailable);
    throw unavailable;
  } finally {
    release();
  }
}
