// Turns a /proc snapshot into "which thread's event loop watches which ZeroMQ descriptors".
//
// What exists in a Node process that uses zeromq.js (libzmq):
// * every Node thread (main, each worker) runs a libuv loop with its own epoll instance. libuv registers
//   each descriptor with `epoll_event.data = fd`, and every loop watches two descriptors of its own:
//   the read end of its signal pipe and one eventfd (its async wake-up);
// * zeromq.js watches a socket's ZMQ_FD — an eventfd signaler owned by libzmq — with a uv_poll handle on
//   the loop of the thread that created the socket, while a receive (or a send that would block) is
//   pending. That thread is woken for every message and does the receive, decode and dispatch;
// * the TCP connections themselves live in libzmq's own I/O thread ("ZMQbg/IO/0", one per context,
//   shared by all threads), whose epoll registers pointers as `data`; they are never in a Node loop.
// So the Node-side owner of a ZeroMQ socket is the thread whose epoll lists the socket's ZMQ_FD.
import type { EpollWatch, TcpSocketEntry } from "./parse.js";
import type { ProcSnapshot } from "./snapshot.js";

/** A thread the probe controls: it created `markerFd` (e.g. a listening socket) on its own loop. */
export interface ThreadMarker {
  label: string;
  markerFd: number;
  /**
   * Eventfds its loop watched before the thread touched ZeroMQ (libuv's own wake-up eventfd). When
   * given, the ZeroMQ signalers are counted exactly as "watched eventfds not in the baseline".
   */
  baselineEventfds?: readonly number[];
}

export type LoopKind = "node-loop" | "libzmq" | "other";

export interface TcpDescriptor {
  fd: number;
  local: string;
  remote: string;
  state: string;
}

export interface EpollOwnerReport {
  epollFd: number;
  label: string;
  /** True when one of the probe's own threads owns this loop (found by its marker descriptor). */
  marked: boolean;
  kind: LoopKind;
  tid: number | undefined;
  threadName: string | undefined;
  eventfds: number[];
  /** ZMQ_FD signalers watched by this loop (node loops only). */
  zmqSignalerFds: number[];
  zmqSignalerCount: number;
  /** "baseline": eventfds minus the thread's baseline; "minus-wakeup": eventfds minus libuv's one wake-up eventfd. */
  countMethod: "baseline" | "minus-wakeup" | "n/a";
  /** TCP descriptors of the ZeroMQ endpoints watched by this epoll. */
  zmqTcp: TcpDescriptor[];
}

export interface DescriptorReport {
  loops: EpollOwnerReport[];
  /** The unmarked Node loop that watches ZeroMQ signalers (the runtime thread), when exactly one does. */
  runtime: EpollOwnerReport | undefined;
  /** Unmarked Node loops that watch ZeroMQ signalers (more than one means the runtime is ambiguous). */
  runtimeCandidates: EpollOwnerReport[];
  /** Every TCP descriptor of the ZeroMQ endpoints in this process, watched or not. */
  zmqTcpTotal: number;
}

function isLibuvStyle(watches: readonly EpollWatch[]): boolean {
  return watches.length > 0 && watches.every((w) => w.data === BigInt(w.tfd));
}

function isZmqTcp(entry: TcpSocketEntry | undefined, ports: ReadonlySet<number>): entry is TcpSocketEntry {
  return entry !== undefined && (ports.has(entry.localPort) || ports.has(entry.remotePort));
}

function describeTcp(fd: number, e: TcpSocketEntry): TcpDescriptor {
  return {
    fd,
    local: `${e.localAddress}:${e.localPort}`,
    remote: `${e.remoteAddress}:${e.remotePort}`,
    state: e.state,
  };
}

/**
 * Labels each non-empty epoll of the snapshot and counts the ZeroMQ descriptors it watches.
 * `zmqPorts`: TCP ports of the ZeroMQ endpoints of interest (handshake, input, output).
 */
export function analyzeDescriptors(
  snapshot: ProcSnapshot,
  markers: readonly ThreadMarker[],
  zmqPorts: readonly number[],
): DescriptorReport {
  const ports = new Set(zmqPorts);
  const tcpOfFd = (fd: number): TcpSocketEntry | undefined => {
    const target = snapshot.fds.get(fd);
    return target?.kind === "socket" ? snapshot.tcp.get(target.inode) : undefined;
  };
  const loops: EpollOwnerReport[] = [];
  for (const [epollFd, watches] of [...snapshot.epolls].sort((a, b) => a[0] - b[0])) {
    if (watches.length === 0) continue;
    const thread = snapshot.threads.find((t) => t.waitingOnEpoll === epollFd);
    const marker = markers.find((m) => watches.some((w) => w.tfd === m.markerFd));
    const eventfds = watches.filter((w) => snapshot.fds.get(w.tfd)?.kind === "eventfd").map((w) => w.tfd);
    const zmqTcp = watches.flatMap((w) => {
      const entry = tcpOfFd(w.tfd);
      return isZmqTcp(entry, ports) ? [describeTcp(w.tfd, entry)] : [];
    });
    let kind: LoopKind;
    if (thread?.name.startsWith("ZMQbg")) kind = "libzmq";
    else if (isLibuvStyle(watches)) kind = "node-loop";
    else kind = zmqTcp.length > 0 ? "libzmq" : "other";

    let zmqSignalerFds: number[] = [];
    let zmqSignalerCount = 0;
    let countMethod: EpollOwnerReport["countMethod"] = "n/a";
    if (kind === "node-loop") {
      if (marker?.baselineEventfds !== undefined) {
        const baseline = new Set(marker.baselineEventfds);
        zmqSignalerFds = eventfds.filter((fd) => !baseline.has(fd));
        zmqSignalerCount = zmqSignalerFds.length;
        countMethod = "baseline";
      } else {
        // libuv keeps exactly one eventfd per loop (its async wake-up); every other eventfd on a
        // Node loop is an addon's uv_poll, here zeromq.js's ZMQ_FD.
        zmqSignalerCount = Math.max(0, eventfds.length - 1);
        countMethod = "minus-wakeup";
      }
    }
    let label: string;
    if (marker) label = marker.label;
    else if (kind === "libzmq") label = `libzmq ${thread?.name ?? "internal thread"}`;
    else if (kind === "node-loop")
      label = zmqSignalerCount > 0 ? "unmarked node loop with zmq" : "unmarked node loop";
    else label = "other epoll (not a libuv loop; its thread was not waiting on it)";
    loops.push({
      epollFd,
      label,
      marked: marker !== undefined,
      kind,
      tid: thread?.tid,
      threadName: thread?.name,
      eventfds,
      zmqSignalerFds,
      zmqSignalerCount,
      countMethod,
      zmqTcp,
    });
  }
  const runtimeCandidates = loops.filter(
    (l) => l.kind === "node-loop" && !l.marked && l.zmqSignalerCount > 0,
  );
  const runtime = runtimeCandidates.length === 1 ? runtimeCandidates[0] : undefined;
  if (runtime) runtime.label = "runtime thread";
  let zmqTcpTotal = 0;
  for (const fd of snapshot.fds.keys()) if (isZmqTcp(tcpOfFd(fd), ports)) zmqTcpTotal++;
  return { loops, runtime, runtimeCandidates, zmqTcpTotal };
}

/** The eventfds watched by the loop that watches `markerFd` (a thread's baseline before it uses ZeroMQ). */
export function baselineEventfdsOf(snapshot: ProcSnapshot, markerFd: number): number[] | undefined {
  for (const watches of snapshot.epolls.values()) {
    if (!watches.some((w) => w.tfd === markerFd)) continue;
    return watches.filter((w) => snapshot.fds.get(w.tfd)?.kind === "eventfd").map((w) => w.tfd);
  }
  return undefined;
}
