import { describe, expect, it } from "vitest";
import { analyzeDescriptors, baselineEventfdsOf } from "../src/procfs/analyze.js";
import type { EpollWatch, FdTarget, TcpSocketEntry } from "../src/procfs/parse.js";
import { describePhase } from "../src/procfs/phase.js";
import type { ProcSnapshot, ThreadInfo } from "../src/procfs/snapshot.js";

// A process laid out like the real ones the probe sees (fd numbers from a recorded run).
const libuv = (...fds: number[]): EpollWatch[] =>
  fds.map((tfd) => ({ tfd, events: 0x19, data: BigInt(tfd) }));
const libzmq = (...fds: number[]): EpollWatch[] =>
  fds.map((tfd, i) => ({ tfd, events: 0x19, data: 0x7f55d8001000n + BigInt(i * 0x40) }));
const waiting = (tid: number, name: string, epollFd: number): ThreadInfo => ({
  tid,
  name,
  syscall: { state: "in-syscall", nr: 232, args: [BigInt(epollFd), 0n, 0n, 0n, 0n, 0n] },
  waitingOnEpoll: epollFd,
});
const running = (tid: number, name: string): ThreadInfo => ({
  tid,
  name,
  syscall: { state: "running" },
  waitingOnEpoll: undefined,
});

const MARKER_MAIN = 40;
const MARKER_CONSUMER = 41;
const ZMQ_PORT_IN = 5555;
const ZMQ_PORT_OUT = 5556;

function snapshot(
  epolls: Record<number, EpollWatch[]>,
  threads: ThreadInfo[],
  extraTcpFds: number[] = [],
): ProcSnapshot {
  const fds = new Map<number, FdTarget>();
  for (const fd of [3, 9, 14, 20, 22, 28, 50]) fds.set(fd, { kind: "epoll" });
  for (const fd of [13, 17, 19, 21, 23, 25, 31, 33, 34, 52]) fds.set(fd, { kind: "eventfd" });
  for (const fd of [11, 15, 29, 51]) fds.set(fd, { kind: "pipe", inode: 1000 + fd });
  fds.set(MARKER_MAIN, { kind: "socket", inode: 9040 }); // abstract unix sockets: not in the TCP table
  fds.set(MARKER_CONSUMER, { kind: "socket", inode: 9041 });
  const tcp = new Map<number, TcpSocketEntry>();
  const tcpFd = (fd: number, inode: number, local: number, remote: number, state: string) => {
    fds.set(fd, { kind: "socket", inode });
    tcp.set(inode, {
      localAddress: "127.0.0.1",
      localPort: local,
      remoteAddress: "127.0.0.1",
      remotePort: remote,
      state,
      inode,
    });
  };
  tcpFd(24, 500, ZMQ_PORT_IN, 0, "LISTEN");
  tcpFd(26, 501, ZMQ_PORT_IN, 40001, "ESTABLISHED");
  tcpFd(27, 502, ZMQ_PORT_OUT, 0, "LISTEN");
  tcpFd(30, 503, ZMQ_PORT_OUT, 40002, "ESTABLISHED");
  tcpFd(35, 504, 8080, 40003, "ESTABLISHED"); // some other TCP connection: not ZeroMQ
  for (const fd of extraTcpFds) tcpFd(fd, 600 + fd, ZMQ_PORT_IN, 41000 + fd, "ESTABLISHED");
  return {
    pid: 100,
    fds,
    epolls: new Map(Object.entries(epolls).map(([k, v]) => [Number(k), v])),
    threads,
    tcp,
  };
}

const common = {
  3: [], // an empty epoll (ignored)
  9: libuv(13, 11), // Node's platform loop (delayed tasks)
  20: libzmq(19), // ZMQbg/Reaper
  22: libzmq(24, 26, 27, 30, 21), // ZMQbg/IO/0: listeners, connections, its mailbox
};
const commonThreads = [
  waiting(101, "node", 9),
  waiting(102, "ZMQbg/Reaper", 20),
  waiting(103, "ZMQbg/IO/0", 22),
];

describe("analyzeDescriptors", () => {
  it("before: the connecting thread's loop watches the ZMQ_FDs (exact with a baseline); no runtime", () => {
    const snap = snapshot({ ...common, 14: libuv(23, 25, 15, 17, MARKER_MAIN) }, [
      running(100, "node"),
      ...commonThreads,
    ]);
    const report = analyzeDescriptors(
      snap,
      [{ label: "connecting thread", markerFd: MARKER_MAIN, baselineEventfds: [17] }],
      [ZMQ_PORT_IN, ZMQ_PORT_OUT],
    );
    const main = report.loops.find((l) => l.label === "connecting thread")!;
    expect(main).toMatchObject({ epollFd: 14, kind: "node-loop", marked: true, countMethod: "baseline" });
    expect(main.zmqSignalerFds).toEqual([23, 25]);
    expect(main.zmqSignalerCount).toBe(2);
    expect(report.runtime).toBeUndefined();
    expect(report.runtimeCandidates).toEqual([]);
    const phase = describePhase(report, "connecting thread");
    expect(phase.connectingThread?.zmqSignalers).toBe(2);
    expect(phase.libzmqTcp).toMatchObject({ count: 4, owners: ["ZMQbg/IO/0"] });
    expect(phase.zmqTcpInNodeLoops).toBe(0);
    expect(phase.zmqTcpTotal).toBe(4);
  });

  it("after: finds the runtime as the only unmarked Node loop with ZMQ_FDs, minus libuv's wake-up eventfd", () => {
    const snap = snapshot(
      {
        ...common,
        14: libuv(15, 17, MARKER_MAIN),
        50: libuv(51, 52, MARKER_CONSUMER),
        28: libuv(29, 31, 33, 34),
      },
      [running(100, "node"), ...commonThreads, waiting(104, "node", 28), waiting(105, "node", 50)],
    );
    const report = analyzeDescriptors(
      snap,
      [
        { label: "connecting thread", markerFd: MARKER_MAIN, baselineEventfds: [17] },
        { label: "consumer thread", markerFd: MARKER_CONSUMER, baselineEventfds: [52] },
      ],
      [ZMQ_PORT_IN, ZMQ_PORT_OUT],
    );
    expect(report.runtime).toMatchObject({
      label: "runtime thread",
      epollFd: 28,
      tid: 104,
      kind: "node-loop",
      marked: false,
      zmqSignalerCount: 2,
      countMethod: "minus-wakeup",
    });
    const phase = describePhase(report, "connecting thread");
    expect(phase.connectingThread?.zmqSignalers).toBe(0);
    expect(phase.runtimeThread?.zmqSignalers).toBe(2);
    expect(phase.runtimeCandidates).toBe(1);
    // Node's platform loop watches only its own pipe and eventfd: not a candidate.
    expect(report.loops.find((l) => l.epollFd === 9)).toMatchObject({
      kind: "node-loop",
      zmqSignalerCount: 0,
    });
    expect(report.loops.find((l) => l.epollFd === 3)).toBeUndefined();
  });

  it("does not guess when two unmarked loops watch ZeroMQ signalers", () => {
    const snap = snapshot(
      { ...common, 14: libuv(15, 17, MARKER_MAIN), 28: libuv(29, 31, 33), 50: libuv(51, 52, 34) },
      [running(100, "node"), ...commonThreads],
    );
    const report = analyzeDescriptors(
      snap,
      [{ label: "connecting thread", markerFd: MARKER_MAIN }],
      [ZMQ_PORT_IN],
    );
    expect(report.runtime).toBeUndefined();
    expect(report.runtimeCandidates.map((l) => l.epollFd)).toEqual([28, 50]);
    expect(describePhase(report, "connecting thread").runtimeCandidates).toBe(2);
  });

  it("without a baseline, a marked loop's count is its eventfds minus one", () => {
    const snap = snapshot({ 14: libuv(23, 15, 17, MARKER_MAIN) }, [running(100, "node")]);
    const [main] = analyzeDescriptors(
      snap,
      [{ label: "connecting thread", markerFd: MARKER_MAIN }],
      [],
    ).loops;
    expect(main).toMatchObject({ countMethod: "minus-wakeup", zmqSignalerCount: 1, eventfds: [23, 17] });
  });

  it("recognises libzmq's epoll by its pointer data when its thread is not waiting at that instant", () => {
    const snap = snapshot({ ...common }, [running(103, "ZMQbg/IO/0")], [36]);
    const report = analyzeDescriptors(snap, [], [ZMQ_PORT_IN, ZMQ_PORT_OUT]);
    const io = report.loops.find((l) => l.epollFd === 22)!;
    expect(io).toMatchObject({ kind: "libzmq", tid: undefined });
    expect(io.zmqTcp.map((t) => t.fd)).toEqual([24, 26, 27, 30]);
    expect(io.zmqTcp[1]).toEqual({
      fd: 26,
      local: "127.0.0.1:5555",
      remote: "127.0.0.1:40001",
      state: "ESTABLISHED",
    });
    // fd 36 is a ZeroMQ-port socket no epoll watches: counted in the total only; port 8080 is never counted.
    expect(report.zmqTcpTotal).toBe(5);
  });
});

describe("baselineEventfdsOf", () => {
  it("lists the eventfds of the loop watching the marker", () => {
    const snap = snapshot({ ...common, 14: libuv(15, 17, MARKER_MAIN) }, []);
    expect(baselineEventfdsOf(snap, MARKER_MAIN)).toEqual([17]);
    expect(baselineEventfdsOf(snap, 999)).toBeUndefined();
  });
});
