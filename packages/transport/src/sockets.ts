import { statSync, unlinkSync } from "node:fs";
import { BindError, type SocketRole } from "@vllm-engine-core/errors";
import type * as zmq from "zeromq";

/** How long closing waits for libzmq to report a socket fully torn down before giving up on the wait. */
const SOCKET_RELEASE_WAIT_MS = 2000;

/** Options every socket of this package gets: never block on exit, never drop on a full pipe (like vLLM). */
export const BASE_SOCKET_OPTIONS = { linger: 0 } as const;

interface Entry {
  socket: zmq.Socket;
  endpoints: string[];
  /** Socket files this entry's binds created, with their identity (so only ours are removed). */
  ipcFiles: IpcFile[];
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
    this.#entries.push({ socket, endpoints: [], ipcFiles: [], pendingBind: undefined, closing: undefined });
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
    const file = ipcFileOf(endpoint);
    if (file !== undefined) entry.ipcFiles.push(file);
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
  // A bind still running on libuv's pool must settle before close can see its endpoint.
  if (entry.pendingBind !== undefined) await entry.pendingBind;
  const { socket } = entry;
  if (socket.closed) return;
  if (entry.endpoints.length === 0) {
    socket.close();
    return;
  }
  await closeAndAwaitRelease(socket);
  removeIpcFiles(entry.ipcFiles);
}

interface IpcFile {
  path: string;
  dev: number;
  ino: number;
}

function ipcFileOf(endpoint: string): IpcFile | undefined {
  // "ipc://@name" is Linux's abstract namespace: no file.
  if (!endpoint.startsWith("ipc://") || endpoint.startsWith("ipc://@")) return undefined;
  const path = endpoint.slice("ipc://".length);
  try {
    const { dev, ino } = statSync(path);
    return { path, dev, ino };
  } catch {
    return undefined;
  }
}

/**
 * libzmq leaves a bound ipc:// socket file behind when the socket is closed (it only removes it on an
 * explicit unbind, which closeAndAwaitRelease avoids); remove the files this set created — unless another
 * socket has bound the same path since (a different file now), which is not ours to remove.
 */
function removeIpcFiles(files: readonly IpcFile[]): void {
  for (const file of files) {
    try {
      const now = statSync(file.path);
      if (now.dev === file.dev && now.ino === file.ino) unlinkSync(file.path);
    } catch {
      // Already gone.
    }
  }
}

/**
 * zmq_close() hands the socket to libzmq's reaper and returns before its listeners are gone, so an immediate
 * re-bind of the same port / ipc path can fail with EADDRINUSE. libzmq stops a socket's monitor (the "end"
 * event) only after every listener and connection of the socket has been torn down, so waiting for "end"
 * makes the release observable. (No zmq_unbind first: unbinding a listener with live connections while the
 * socket is being closed races two terminations of the same pipes, and libzmq 4.3.5 can abort on that.)
 *
 * The observer is never closed by hand: libzmq writes monitor events with a blocking send, so an observer
 * closed while its socket lives makes the next event block libzmq's reaper or I/O thread, which stalls every
 * ZeroMQ socket of the process. It closes itself when it reads the "end" event.
 */
async function closeAndAwaitRelease(socket: zmq.Socket): Promise<void> {
  const observer = socket.events; // attach the monitor before closing so "end" is seen
  const ended = (async () => {
    try {
      for (;;) {
        if ((await observer.receive()).type === "end") return;
      }
    } catch {
      // The observer is gone already.
    }
  })();
  socket.close();
  await boundedWait(ended, SOCKET_RELEASE_WAIT_MS);
}

/** Waits for `promise` at most `ms` (best effort; the timer never outlives the wait). */
async function boundedWait(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
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
