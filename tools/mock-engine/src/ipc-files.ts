// Socket files of ipc:// endpoints that nobody listens on any more. libzmq leaves a bound ipc:// file behind
// when its socket closes (and always when its process is killed), so whoever handed an ipc:// endpoint to a
// process removes the file once that process has ended — but only when no socket listens on it any more:
// the mock engine connects to its addresses (it never binds), so the file usually belongs to a frontend
// that may still be serving it (other engines, a restarted engine).
import { lstatSync, readFileSync, unlinkSync } from "node:fs";
import { isAbsolute } from "node:path";

/** The file behind an ipc:// endpoint; undefined for other transports and Linux's abstract "ipc://@name". */
export function ipcSocketPath(endpoint: string): string | undefined {
  if (!endpoint.startsWith("ipc://") || endpoint.startsWith("ipc://@")) return undefined;
  return endpoint.slice("ipc://".length);
}

/** __SO_ACCEPTCON in /proc/net/unix's Flags column: the socket is listening. */
const SO_ACCEPTCON = 0x10000;

/** Paths of every listening Unix socket of this network namespace, or undefined where /proc/net/unix is missing. */
function listeningSocketPaths(): Set<string> | undefined {
  let table: string;
  try {
    table = readFileSync("/proc/net/unix", "utf8");
  } catch {
    return undefined;
  }
  const paths = new Set<string>();
  // "Num RefCount Protocol Flags Type St Inode Path": the path is the rest of the line, if any.
  for (const line of table.split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8) continue;
    if ((Number.parseInt(fields[3]!, 16) & SO_ACCEPTCON) === 0) continue;
    paths.add(fields.slice(7).join(" "));
  }
  return paths;
}

function isSocketFile(path: string): boolean {
  try {
    return lstatSync(path).isSocket();
  } catch {
    return false;
  }
}

/**
 * Removes the socket files of `endpoints` that no socket listens on (absolute ipc:// paths only; tcp://,
 * abstract and relative endpoints and anything that is not a socket file are left alone). Returns the removed
 * paths. Needs Linux's /proc/net/unix to tell a stale file from a live one; elsewhere it removes nothing.
 */
export function removeStaleIpcFiles(endpoints: Iterable<string | undefined>): string[] {
  const candidates: string[] = [];
  for (const endpoint of endpoints) {
    const path = endpoint === undefined ? undefined : ipcSocketPath(endpoint);
    if (path !== undefined && isAbsolute(path) && isSocketFile(path)) candidates.push(path);
  }
  if (candidates.length === 0) return [];
  const listening = listeningSocketPaths();
  if (listening === undefined) return [];
  const removed: string[] = [];
  for (const path of new Set(candidates)) {
    if (listening.has(path)) continue;
    try {
      unlinkSync(path);
      removed.push(path);
    } catch {
      // Gone already.
    }
  }
  return removed;
}
