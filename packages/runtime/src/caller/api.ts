// openConnection / attachConnection: the host API any thread calls. Nothing here touches a socket: the
// connect itself (binds, handshakes, registrations) and every loop run on the runtime worker.
import { type EngineCoreClientConfig, type ResolvedConfig, resolveConfig } from "@vllm-engine-core/config";
import { ClientClosedError, deserializeError, InvalidConnectionHandleError } from "@vllm-engine-core/errors";
import { type AttachResult, isRetiring } from "../messages.js";
import { CANCEL_CONFIRM_TIMEOUT_MS, RETIRING_RETRIES } from "../timing.js";
import type { ConnectionHandle, RuntimeConnection } from "../types.js";
import { ThreadConnection } from "./connection.js";
import { linkTo, type RuntimeLink } from "./link.js";
import { ensureRuntime, locateRuntime } from "./rendezvous.js";
import { untilAborted } from "./until-aborted.js";

/** This thread's live connections, so attaching twice returns the same object. */
const connections = new Map<string, ThreadConnection>();

/**
 * Opens a connection to the engines. Starts the runtime worker first if none is running (from a worker
 * thread, the main-thread host spawns it), then runs the whole connection path on it. Aborting `signal`
 * at any stage closes everything opened so far on the runtime and rejects with the signal's reason.
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
    const gen = await ensureRuntime(signal);
    try {
      const link = await untilAborted(linkTo(gen), signal);
      return await connectOn(link, resolved, signal);
    } catch (error) {
      // The runtime retired between our rendezvous and our call: ask the host for a fresh one.
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
  const gen = connectionId.slice(0, connectionId.indexOf(":"));
  // Fail fast on a runtime that already ended instead of waiting for a welcome that never comes.
  const where = await locateRuntime(gen);
  if (!where.alive) {
    if (where.fate.kind === "crashed") throw deserializeError(where.fate.error);
    throw new ClientClosedError({ detail: "the connection was shut down" });
  }
  try {
    const link = await linkTo(gen);
    const attached = await link.call({ t: "attach", connectionId }).result;
    return adopt(link, attached);
  } catch (error) {
    if (isRetiring(error)) throw new ClientClosedError({ detail: "the connection was shut down" });
    throw error;
  }
}

async function connectOn(
  link: RuntimeLink,
  config: ResolvedConfig,
  signal: AbortSignal | undefined,
): Promise<RuntimeConnection> {
  signal?.throwIfAborted();
  const { id, result } = link.call({ t: "connect", config });
  if (signal === undefined) return adopt(link, await result);
  return new Promise<RuntimeConnection>((resolve, reject) => {
    const onAbort = () => {
      // Cancel on the runtime and wait (bounded) until it confirms: by then every socket it opened is
      // closed, so the caller can bind the same addresses right away.
      link.post({ t: "cancel", id });
      const giveUp = setTimeout(() => reject(signal.reason), CANCEL_CONFIRM_TIMEOUT_MS);
      result.then(
        async (value) => {
          // The connect finished before the cancel reached the runtime: close what it opened.
          try {
            await link.call({ t: "shutdown", connectionId: value.connectionId }).result;
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
        resolve(adopt(link, value));
      },
      (error: unknown) => {
        if (signal.aborted) return;
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function adopt(link: RuntimeLink, attached: AttachResult): ThreadConnection {
  const { connectionId } = attached;
  const existing = connections.get(connectionId);
  if (existing !== undefined && !existing.closed) return existing;
  const connection = new ThreadConnection(link, attached, () => {
    if (connections.get(connectionId) === connection) connections.delete(connectionId);
  });
  connections.set(connectionId, connection);
  // Tells the runtime this thread holds the connection now (an unadopted one dies with its opener).
  link.post({ t: "adopt", connectionId });
  return connection;
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return `a ${typeof value}`;
  return `an object with keys [${Object.keys(value).join(", ")}]`;
}
