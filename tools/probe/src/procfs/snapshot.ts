// Reads one snapshot of this process's descriptors, epoll interest lists, threads and TCP sockets
// from /proc (Linux only). Descriptors may close while we read; those are skipped.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import {
  classifyFdTarget,
  type EpollWatch,
  epollFdOfTask,
  type FdTarget,
  parseEpollFdinfo,
  parseProcNetTcp,
  parseTaskSyscall,
  type TaskSyscall,
  type TcpSocketEntry,
} from "./parse.js";

export interface ThreadInfo {
  tid: number;
  /** `/proc/<pid>/task/<tid>/comm` (libzmq names its threads ZMQbg/IO/0, ZMQbg/Reaper). */
  name: string;
  syscall: TaskSyscall | undefined;
  /** Set when the thread is blocked in epoll_wait/epoll_pwait on this epoll fd. */
  waitingOnEpoll: number | undefined;
}

export interface ProcSnapshot {
  pid: number;
  fds: Map<number, FdTarget>;
  /** epoll fd → its interest list. */
  epolls: Map<number, EpollWatch[]>;
  threads: ThreadInfo[];
  /** socket inode → TCP entry (IPv4 and IPv6). */
  tcp: Map<number, TcpSocketEntry>;
}

export function procfsAvailable(): boolean {
  if (process.platform !== "linux") return false;
  try {
    readdirSync("/proc/self/fdinfo");
    return true;
  } catch {
    return false;
  }
}

function tryRead(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

export function readProcSnapshot(): ProcSnapshot {
  const fds = new Map<number, FdTarget>();
  const epolls = new Map<number, EpollWatch[]>();
  for (const name of readdirSync("/proc/self/fd")) {
    const fd = Number(name);
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${name}`);
    } catch {
      continue;
    }
    const kind = classifyFdTarget(target);
    fds.set(fd, kind);
    if (kind.kind === "epoll") {
      const info = tryRead(`/proc/self/fdinfo/${name}`);
      if (info !== undefined) epolls.set(fd, parseEpollFdinfo(info));
    }
  }
  const threads: ThreadInfo[] = [];
  for (const name of readdirSync("/proc/self/task")) {
    const tid = Number(name);
    const comm = tryRead(`/proc/self/task/${name}/comm`);
    if (comm === undefined) continue;
    const raw = tryRead(`/proc/self/task/${name}/syscall`);
    const syscall = raw === undefined ? undefined : parseTaskSyscall(raw);
    threads.push({
      tid,
      name: comm.trim(),
      syscall,
      waitingOnEpoll: syscall === undefined ? undefined : epollFdOfTask(syscall, process.arch),
    });
  }
  const tcp = new Map<number, TcpSocketEntry>();
  for (const file of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    const text = tryRead(file);
    if (text === undefined) continue;
    for (const entry of parseProcNetTcp(text)) if (entry.inode !== 0) tcp.set(entry.inode, entry);
  }
  return { pid: process.pid, fds, epolls, threads, tcp };
}
