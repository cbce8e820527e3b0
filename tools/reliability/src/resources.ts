// Process resource figures from /proc (Linux) and V8, for the leak checks and the soak log.
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";

export interface ResourceSample {
  /** Open file descriptors (/proc/self/fd). */
  fds: number;
  /** OS threads of this process (/proc/self/task): main, workers, libuv pool, V8 platform, libzmq I/O. */
  threads: number;
  /** V8 heap of this (main) isolate after a full GC, bytes (no GC if --expose-gc is missing). */
  heapUsed: number;
  rss: number;
  external: number;
  arrayBuffers: number;
  /** ipc socket files left in the temp dir with the given prefix. */
  ipcFiles: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

export function hasGc(): boolean {
  return gc !== undefined;
}

/** Several full collections with turns of the event loop in between, so finalizers and weak callbacks run. */
export async function settleHeap(): Promise<void> {
  if (gc === undefined) return;
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export function countFiles(dir: string, prefix: string): number {
  try {
    return readdirSync(dir).filter((name) => name.startsWith(prefix)).length;
  } catch {
    return 0;
  }
}

export async function sample(ipcPrefix = "vec-rel-"): Promise<ResourceSample> {
  await settleHeap();
  const memory = process.memoryUsage();
  return {
    fds: readdirSync("/proc/self/fd").length,
    threads: readdirSync("/proc/self/task").length,
    heapUsed: memory.heapUsed,
    rss: memory.rss,
    external: memory.external,
    arrayBuffers: memory.arrayBuffers,
    ipcFiles: countFiles(tmpdir(), ipcPrefix),
  };
}

export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

export function describeSample(s: ResourceSample): string {
  return `fds ${s.fds}, threads ${s.threads}, heap ${mb(s.heapUsed)}, rss ${mb(s.rss)}, external ${mb(s.external)}, ipc files ${s.ipcFiles}`;
}
