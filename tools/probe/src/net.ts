// Loopback helpers: a free TCP port, and a thread marker (a listening socket on this thread's loop).
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:net";
import { reservedTcpPorts } from "@vllm-engine-core/mock-engine";

/**
 * A TCP port free on 127.0.0.1, below the kernel's ephemeral range (the mock engine's reservedTcpPorts): a
 * port from listen(0) could be taken by any outgoing connection before the frontend binds it.
 */
export async function freeTcpPort(): Promise<number> {
  const [port] = await reservedTcpPorts(1);
  return port!;
}

export interface ThreadMarkerHandle {
  /** The listening descriptor; the epoll that watches it belongs to the thread that created it. */
  fd: number;
  close(): Promise<void>;
}

/**
 * Listens on an abstract unix socket (Linux; nothing on disk) so this thread's libuv loop registers the
 * descriptor in its epoll. Returns undefined where descriptors are not exposed.
 */
export async function createThreadMarker(): Promise<ThreadMarkerHandle | undefined> {
  if (process.platform !== "linux") return undefined;
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(`\0vllm-engine-core-probe-${randomUUID()}`, resolve);
  });
  server.unref();
  const fd = (server as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== "number" || fd < 0) {
    server.close();
    return undefined;
  }
  // libuv adds the descriptor to epoll on its next loop iteration, not inside listen(): let it run once.
  await new Promise((resolve) => setTimeout(resolve, 10));
  return { fd, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
