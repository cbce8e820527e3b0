import { BindError, type SocketRole } from "@vllm-engine-core/protocol";
import type * as zmq from "zeromq";

/** How long close() waits for libzmq to report a listener closed before giving up on the wait. */
const LISTENER_CLOSE_WAIT_MS = 1000;

/** Options every socket of this package gets: never block on exit, never drop on a full pipe (like vLLM). */
export const BASE_SOCKET_OPTIONS = { linger: 0 } as const;

interface Entry {
  socket: zmq.Socket;
  endpoints: string[];
  pendingBind: Promise<unknown> | undefined;
  closing: Promise<void> | undefined;
}

/**
 * The sockets one transport (or one connect attempt) owns. Closing releases every bound endpoint for real
 * before it returns, so the same addresses can be bound again at once.
 */
export class SocketSet {
  readonly #entries: Entry[] = [];
  #closed: Promise<void> | undefined;

  add<T extends zmq.Socket>(socket: T): T {
    this.#entries.push({ socket, endpoints: [], pendingBind: undefined, closing: undefined });
    return socket;
  }

  /** Binds and returns the real endpoint (the port is read back for tcp://host:0). */
  async bind(socket: zmq.Socket, address: string, role: SocketRole): Promise<string> {
    const entry = this.#entries.find((e) => e.socket === socket);
    if (entry === undefined) throw new Error("internal: bind() on a socket this set does not own");
    const pending = socket.bind(address);
    entry.pendingBind = pending.catch(() => undefined);
    try {
      await pending;
    } catch (error) {
      throw new BindError({ address, socket: role, causeMessage: describe(error) });
    } finally {
      entry.pendingBind = undefined;
    }
    const endpoint = socket.lastEndpoint ?? address;
    entry.endpoints.push(endpoint);
    return endpoint;
  }

  /** Closes one socket early (e.g. the handshake ROUTER once startup is done). Idempotent. */
  release(socket: zmq.Socket): Promise<void> {
    const entry = this.#entries.find((e) => e.socket === socket);
    return entry === undefined ? Promise.resolve() : closeEntryOnce(entry);
  }

  /** Idempotent. Unbinds every endpoint (waiting until its listener is gone), then closes every socket. */
  closeAll(): Promise<void> {
    this.#closed ??= Promise.all(this.#entries.map(closeEntryOnce)).then(() => undefined);
    return this.#closed;
  }
}

function closeEntryOnce(entry: Entry): Promise<void> {
  entry.closing ??= closeEntry(entry);
  return entry.closing;
}

async function closeEntry(entry: Entry): Promise<void> {
  // A bind still running on libuv's pool must settle before unbind/close can see its endpoint.
  if (entry.pendingBind !== undefined) await entry.pendingBind;
  const { socket } = entry;
  if (!socket.closed && entry.endpoints.length > 0) {
    try {
      await releaseEndpoints(socket, entry.endpoints);
    } catch {
      // Best effort: close() below still tears the socket down.
    }
  }
  if (!socket.closed) socket.close();
}

/**
 * zmq_close() hands the listener to libzmq's reaper and returns before the port / ipc path is free, so an
 * immediate re-bind can fail with EADDRINUSE. Unbinding and waiting for the monitor's "close" event for
 * the endpoint makes the release observable.
 */
async function releaseEndpoints(socket: zmq.Socket, endpoints: readonly string[]): Promise<void> {
  const observer = socket.events; // the monitor must exist before unbind to see the event
  const waiting = new Set(endpoints);
  let timer: NodeJS.Timeout | undefined;
  const allClosed = (async () => {
    while (waiting.size > 0 && !observer.closed) {
      const event = await observer.receive();
      if (event.type === "end") return;
      if (event.type === "close" || event.type === "close:error") waiting.delete(event.address);
    }
  })().catch(() => undefined);
  const gaveUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, LISTENER_CLOSE_WAIT_MS);
  });
  try {
    for (const endpoint of endpoints) {
      try {
        await socket.unbind(endpoint);
      } catch {
        waiting.delete(endpoint);
      }
    }
    if (waiting.size > 0) await Promise.race([allClosed, gaveUp]);
  } finally {
    clearTimeout(timer);
    observer.close();
    await allClosed;
  }
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" && !error.message.includes(code)
      ? `${error.message} (${code})`
      : error.message;
  }
  return String(error);
}
