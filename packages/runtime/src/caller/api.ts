// openConnection / attachConnection: the host API any thread calls. Nothing here touches a socket: the
// connect itself (binds, handshakes, registrations) and every loop run on the runtime worker.
import { type EngineCoreClientConfig, type ResolvedConfig, resolveConfig } from "@vllm-engine-core/config";
import { ClientClosedError, InvalidConnectionHandleError } from "@vllm-engine-core/errors";
import { type AttachResult, isRetiring } from "../messages.js";
import { CANCEL_CONFIRM_TIMEOUT_MS, RETIRING_RETRIES } from "../timing.js";
import type { ConnectionHandle, RuntimeConnection } from "../types.js";
import { ThreadConnection } from "./connection.js";
import type { Lane } from "./lane.js";
import { openLane } from "./rendezvous.js";
import { untilAborted } from "./until-aborted.js";

/** This thread's live connections, so attaching twice returns the same object. */
const connections = new Map<string, ThreadConnection>();

/**
 * Opens a connection to the engines. Starts the runtime worker first if none is running (the main-thread
 * host spawns it), then runs the whole connection path on it. Aborting `signal` at any stage closes
 * everything opened so far on the runtime and rejects with the signal's reason.
 */
export async function openConnection(
  config: EngineCoreClientConfig | ResolvedConfig,
  options: { signal?: AbortSignal } = {},
): Promise<RuntimeConnection> {
  // The one validation, on the calling thread; a config EngineCoreClient.connect already resolved is
  // taken as it is. The runtime thread and the transport never validate again.
  const resolved = resolveConfig(config);
  const { signal } = options;
  signal?.throwIfAborted();
  for (let attempt = 0; ; attempt++) {
    const lane = await untilAborted(openLane(null), signal);
    try {
      return await connectOn(lane, resolved, signal);
    } catch (error) {
      lane.close(asError(error));
      // The runtime retired between the rendezvous and the call: a fresh one takes the next lane.
      if (isRetiring(error) && attempt < RETIRING_RETRIES) continue;
      throw error;
    }
  }
}

/** Uses, on this thread, a connection opened on any thread of this process. */
export async function attachConnection(handle: ConnectionHandle): Promise<RuntimeConnection> {
  const connectionId = handle?.connectionId;
  if (
    handle?.__vllmConnectionHandle !== 1 ||
    typeof connectionId !== "string" ||
    !connectionId.includes(":")
  ) {
    throw new InvalidConnectionHandleError({ received: describeValue(handle) });
  }
  const existing = connections.get(connectionId);
  if (existing !== undefined && !existing.closed) return existing;
  const lane = await openLane(connectionId.slice(0, connectionId.indexOf(":")));
  try {
    return adopt(lane, await lane.call({ t: "attach", connectionId }).result);
  } catch (error) {
    const reported = isRetiring(error)
      ? new ClientClosedError({ detail: "the connection was shut down" })
      : error;
    lane.close(asError(reported));
    throw reported;
  }
}

async function connectOn(
  lane: Lane,
  config: ResolvedConfig,
  signal: AbortSignal | undefined,
): Promise<RuntimeConnection> {
  signal?.throwIfAborted();
  const { id, result } = lane.call({ t: "connect", config });
  if (signal === undefined) return adopt(lane, await result);
  return new Promise<RuntimeConnection>((resolve, reject) => {
    const onAbort = () => {
      // Cancel on the runtime and wait (bounded) until it confirms: by then every socket it opened is
      // closed, so the caller can bind the same addresses right away.
      lane.post({ t: "cancel", id });
      const giveUp = setTimeout(() => reject(signal.reason), CANCEL_CONFIRM_TIMEOUT_MS);
      result.then(
        async () => {
          // The connect finished before the cancel reached the runtime: close what it opened.
          try {
            await lane.call({ t: "shutdown" }).result;
          } catch {
            // Already gone.
          }
          clearTimeout(giveUp);
          reject(signal.reason);
        },
        () => {
          clearTimeout(giveUp);
          reject(signal.reason);
        },
      );
    };
    signal.addEventListener("abort", onAbort, { once: true });
    result.then(
      (value) => {
        if (signal.aborted) return;
        signal.removeEventListener("abort", onAbort);
        resolve(adopt(lane, value));
      },
      (error: unknown) => {
        if (signal.aborted) return;
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function adopt(lane: Lane, attached: AttachResult): ThreadConnection {
  const { connectionId } = attached;
  const existing = connections.get(connectionId);
  if (existing !== undefined && !existing.closed) {
    // Attached twice at once: the first lane serves this thread; the second one closes.
    lane.close(new ClientClosedError({ detail: "this thread is already attached to the connection" }));
    return existing;
  }
  const connection = new ThreadConnection(lane, attached, () => {
    if (connections.get(connectionId) === connection) connections.delete(connectionId);
  });
  connections.set(connectionId, connection);
  // Tells the runtime this thread holds the connection now (an unadopted one dies with its opener).
  lane.post({ t: "adopt" });
  return connection;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return `a ${typeof value}`;
  return `an object with keys [${Object.keys(value).join(", ")}]`;
}
