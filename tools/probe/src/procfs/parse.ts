// Pure parsers for the Linux /proc files the probe reads. They take file contents (strings) so they
// can be tested on any OS with recorded samples.

/** One descriptor registered in an epoll instance (a `tfd:` line of the epoll's fdinfo). */
export interface EpollWatch {
  /** The watched descriptor number (in the process that registered it). */
  tfd: number;
  /** Event mask (EPOLLIN = 0x1, ...). */
  events: number;
  /** `epoll_event.data` as registered: libuv stores the fd itself, libzmq a pointer. */
  data: bigint;
}

const TFD_LINE = /^tfd:\s*(\d+)\s+events:\s*([0-9a-fA-F]+)\s+data:\s*([0-9a-fA-F]+)/;

/** Parses `/proc/<pid>/fdinfo/<epoll fd>`: one entry per `tfd:` line, in file order. */
export function parseEpollFdinfo(text: string): EpollWatch[] {
  const watches: EpollWatch[] = [];
  for (const line of text.split("\n")) {
    const m = TFD_LINE.exec(line.trim());
    if (m === null) continue;
    watches.push({ tfd: Number(m[1]), events: Number.parseInt(m[2]!, 16), data: BigInt(`0x${m[3]}`) });
  }
  return watches;
}

export type FdTarget =
  | { kind: "epoll" }
  | { kind: "eventfd" }
  | { kind: "socket"; inode: number }
  | { kind: "pipe"; inode: number }
  | { kind: "other"; target: string };

/** Classifies the target of a `/proc/<pid>/fd/<n>` symlink. */
export function classifyFdTarget(target: string): FdTarget {
  if (target === "anon_inode:[eventpoll]") return { kind: "epoll" };
  if (target === "anon_inode:[eventfd]") return { kind: "eventfd" };
  const socket = /^socket:\[(\d+)\]$/.exec(target);
  if (socket) return { kind: "socket", inode: Number(socket[1]) };
  const pipe = /^pipe:\[(\d+)\]$/.exec(target);
  if (pipe) return { kind: "pipe", inode: Number(pipe[1]) };
  return { kind: "other", target };
}

export type TaskSyscall =
  | { state: "running" }
  | { state: "not-in-syscall" }
  | { state: "in-syscall"; nr: number; args: bigint[] };

/**
 * Parses `/proc/<pid>/task/<tid>/syscall`: "running", "-1 <sp> <pc>" (blocked, not in a syscall) or
 * "<nr> <arg1> … <arg6> <sp> <pc>" (blocked in syscall nr).
 */
export function parseTaskSyscall(text: string): TaskSyscall {
  const parts = text.trim().split(/\s+/);
  if (parts[0] === "running") return { state: "running" };
  const nr = Number(parts[0]);
  if (!Number.isInteger(nr) || nr < 0) return { state: "not-in-syscall" };
  return { state: "in-syscall", nr, args: parts.slice(1, 7).map((a) => BigInt(a)) };
}

/** Syscall numbers of epoll_wait / epoll_pwait / epoll_pwait2 (first argument = the epoll fd). */
export function epollWaitSyscalls(arch: string): readonly number[] {
  if (arch === "x64") return [232, 281, 441];
  if (arch === "arm64") return [22, 441];
  return [];
}

/** The epoll fd a thread is blocked on, or undefined when it is not waiting in epoll. */
export function epollFdOfTask(syscall: TaskSyscall, arch: string): number | undefined {
  if (syscall.state !== "in-syscall" || !epollWaitSyscalls(arch).includes(syscall.nr)) return undefined;
  return Number(syscall.args[0]);
}

export interface TcpSocketEntry {
  localAddress: string;
  localPort: number;
  remoteAddress: string;
  remotePort: number;
  /** "LISTEN", "ESTABLISHED", … (hex state from the kernel mapped to its name). */
  state: string;
  inode: number;
}

const TCP_STATES: Record<number, string> = {
  1: "ESTABLISHED",
  2: "SYN_SENT",
  3: "SYN_RECV",
  4: "FIN_WAIT1",
  5: "FIN_WAIT2",
  6: "TIME_WAIT",
  7: "CLOSE",
  8: "CLOSE_WAIT",
  9: "LAST_ACK",
  10: "LISTEN",
  11: "CLOSING",
};

function hexAddress(hex: string): string {
  if (hex.length === 8) {
    // IPv4 in host (little-endian) byte order.
    const n = Number.parseInt(hex, 16);
    return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff].join(".");
  }
  // IPv6: four little-endian 32-bit words; keep it compact but unambiguous.
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((w) => (w.match(/../g) ?? []).reverse());
  const groups: string[] = [];
  for (let i = 0; i < bytes.length; i += 2) groups.push(`${bytes[i]}${bytes[i + 1]}`.replace(/^0{1,3}/, ""));
  return groups.join(":");
}

/** Parses `/proc/<pid>/net/tcp` or `/proc/<pid>/net/tcp6`. */
export function parseProcNetTcp(text: string): TcpSocketEntry[] {
  const entries: TcpSocketEntry[] = [];
  for (const line of text.split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10) continue;
    const [localAddr, localPort] = cols[1]!.split(":");
    const [remoteAddr, remotePort] = cols[2]!.split(":");
    if (!localAddr || !localPort || !remoteAddr || !remotePort) continue;
    const stateCode = Number.parseInt(cols[3]!, 16);
    entries.push({
      localAddress: hexAddress(localAddr),
      localPort: Number.parseInt(localPort, 16),
      remoteAddress: hexAddress(remoteAddr),
      remotePort: Number.parseInt(remotePort, 16),
      state: TCP_STATES[stateCode] ?? `0x${cols[3]}`,
      inode: Number(cols[9]),
    });
  }
  return entries;
}
