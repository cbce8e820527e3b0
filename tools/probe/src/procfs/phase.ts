// The per-phase figures the probe prints: ZeroMQ signalers on the connecting and runtime threads' loops,
// and where the ZeroMQ TCP descriptors are.
import type { DescriptorReport, EpollOwnerReport, TcpDescriptor } from "./analyze.js";

export interface ThreadDescriptors {
  label: string;
  epollFd: number;
  tid: number | undefined;
  threadName: string | undefined;
  /** ZMQ_FD signalers registered in this thread's epoll. */
  zmqSignalers: number;
  signalerFds: number[];
  countMethod: EpollOwnerReport["countMethod"];
}

export interface DescriptorPhase {
  connectingThread: ThreadDescriptors | undefined;
  runtimeThread: ThreadDescriptors | undefined;
  /** Unmarked Node loops watching ZeroMQ signalers (1 when the runtime was found unambiguously). */
  runtimeCandidates: number;
  /** ZeroMQ TCP descriptors registered in libzmq's internal epolls, and which threads those are. */
  libzmqTcp: { count: number; owners: string[]; descriptors: TcpDescriptor[] };
  /** ZeroMQ TCP descriptors registered in any Node loop (libzmq never does this: expected 0). */
  zmqTcpInNodeLoops: number;
  /** Every ZeroMQ TCP descriptor open in the process (listeners and accepted connections). */
  zmqTcpTotal: number;
  loops: EpollOwnerReport[];
}

function threadDescriptors(loop: EpollOwnerReport): ThreadDescriptors {
  return {
    label: loop.label,
    epollFd: loop.epollFd,
    tid: loop.tid,
    threadName: loop.threadName,
    zmqSignalers: loop.zmqSignalerCount,
    signalerFds: loop.zmqSignalerFds,
    countMethod: loop.countMethod,
  };
}

export function describePhase(report: DescriptorReport, connectingLabel: string): DescriptorPhase {
  const connecting = report.loops.find((l) => l.label === connectingLabel);
  const libzmq = report.loops.filter((l) => l.kind === "libzmq");
  const tcp = libzmq.flatMap((l) => l.zmqTcp);
  return {
    connectingThread: connecting ? threadDescriptors(connecting) : undefined,
    runtimeThread: report.runtime ? threadDescriptors(report.runtime) : undefined,
    runtimeCandidates: report.runtimeCandidates.length,
    libzmqTcp: {
      count: tcp.length,
      owners: libzmq.filter((l) => l.zmqTcp.length > 0).map((l) => l.threadName ?? `epoll fd ${l.epollFd}`),
      descriptors: tcp,
    },
    zmqTcpInNodeLoops: report.loops
      .filter((l) => l.kind === "node-loop")
      .reduce((n, l) => n + l.zmqTcp.length, 0),
    zmqTcpTotal: report.zmqTcpTotal,
    loops: report.loops,
  };
}
