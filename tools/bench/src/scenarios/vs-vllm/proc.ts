// Process CPU from /proc (Linux): the process table (pid → parent, CPU seconds of all its threads), process
// trees, and the machine's busy time, so a run can say which process was near a core and what else ran.
import { readdirSync, readFileSync } from "node:fs";
import { cpuSecondsOf, parseStatCpuSeconds, statFields, systemSecondsOf } from "../../cpu.js";

export interface ProcEntry {
  readonly ppid: number;
  /** utime + stime of every thread of the process, seconds. */
  readonly cpuSeconds: number;
  /** Of it, stime: in the kernel. */
  readonly systemSeconds: number;
}

/** The parent pid and CPU seconds from the text of /proc/<pid>/stat (the command name may hold spaces and ')'). */
export function parseStat(stat: string): ProcEntry {
  const fields = statFields(stat);
  // fields[0] is field 3 (state), fields[1] field 4 (ppid).
  return {
    ppid: Number(fields[1]),
    cpuSeconds: cpuSecondsOf(fields),
    systemSeconds: systemSecondsOf(fields),
  };
}

/** Every process visible now. */
export function readProcessTable(): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      table.set(Number(name), parseStat(readFileSync(`/proc/${name}/stat`, "utf8")));
    } catch {
      // Exited between readdir and read.
    }
  }
  return table;
}

/** `root` and every process below it in `table` (root included even when absent from the table). */
export function descendants(table: ReadonlyMap<number, ProcEntry>, root: number): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, entry] of table) {
    const list = children.get(entry.ppid);
    if (list) list.push(pid);
    else children.set(entry.ppid, [pid]);
  }
  const out: number[] = [];
  const todo = [root];
  while (todo.length > 0) {
    const pid = todo.pop() as number;
    out.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** CPU seconds of `pids` in `table` (pids not in it count 0); `kind` "system" for stime alone. */
export function cpuOf(
  table: ReadonlyMap<number, ProcEntry>,
  pids: readonly number[],
  kind: "all" | "system" = "all",
): number {
  let sum = 0;
  for (const pid of pids) {
    const entry = table.get(pid);
    if (entry) sum += kind === "all" ? entry.cpuSeconds : entry.systemSeconds;
  }
  return sum;
}

/** Busy and total CPU seconds of the whole machine (all cores) from the text of /proc/stat's "cpu" line. */
export function parseMachineStat(text: string): { busySeconds: number; totalSeconds: number } {
  const line = text.split("\n").find((l) => l.startsWith("cpu "));
  if (!line) throw new Error("/proc/stat has no aggregate 'cpu' line");
  // user nice system idle iowait irq softirq steal (guest times are already inside user/nice).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  const total = busy + (idle ?? 0) + (iowait ?? 0);
  return { busySeconds: busy / 100, totalSeconds: total / 100 };
}

export function readMachineBusySeconds(): number {
  return parseMachineStat(readFileSync("/proc/stat", "utf8")).busySeconds;
}

/**
 * What a thread is, from its name (/proc/<pid>/task/<tid>/comm). Node.js ≥ 22 names its threads: the event
 * loop "MainThread", worker_threads "WorkerThread" (the runtime; and API servers 2..N), V8's platform
 * threads "V8Worker" (GC, concurrent compilation), libuv's pool "libuv-worker" (the tokenizer's encodes);
 * ZeroMQ's I/O thread is "ZMQbg/IO/<n>". Other names (Node.js 20's "node", Python's threads) are kept.
 */
export function threadGroup(comm: string): string {
  if (comm === "MainThread") return "main";
  if (comm === "WorkerThread") return "worker threads";
  if (comm === "V8Worker") return "V8 workers";
  if (comm === "libuv-worker") return "libuv pool";
  if (comm.startsWith("ZMQbg/")) return "ZeroMQ I/O";
  return comm;
}

export interface ThreadCpu {
  readonly group: string;
  readonly seconds: number;
}

/** Every live thread of `pids` (keyed "pid/tid"): its `threadGroup` and CPU seconds. */
export function readThreads(pids: readonly number[]): Map<string, ThreadCpu> {
  const threads = new Map<string, ThreadCpu>();
  for (const pid of pids) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // exited
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        const group = threadGroup(readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim());
        threads.set(`${pid}/${tid}`, { group, seconds: parseStatCpuSeconds(stat) });
      } catch {
        // The thread ended between readdir and read.
      }
    }
  }
  return threads;
}

/**
 * CPU seconds per thread group between two readings, over the threads alive at the second (one that started
 * in between counts from zero; one that ended in between is missing).
 */
export function threadGroupSeconds(
  a: ReadonlyMap<string, ThreadCpu>,
  b: ReadonlyMap<string, ThreadCpu>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, thread] of b) {
    out[thread.group] = (out[thread.group] ?? 0) + thread.seconds - (a.get(key)?.seconds ?? 0);
  }
  return out;
}

/** The processes each role is measured over; fixed when the window opens. */
export interface Roles {
  readonly server: readonly number[];
  readonly engine: readonly number[];
  readonly client: readonly number[];
}

export interface CpuSnapshot {
  readonly at: number;
  readonly server: number;
  /** Of `server`, in the kernel. */
  readonly serverSystem: number;
  /** The server's live threads. */
  readonly serverThreads: ReadonlyMap<string, ThreadCpu>;
  readonly engine: number;
  readonly client: number;
  readonly machineBusy: number;
}

export function snapshot(roles: Roles): CpuSnapshot {
  const table = readProcessTable();
  return {
    at: performance.now(),
    server: cpuOf(table, roles.server),
    serverSystem: cpuOf(table, roles.server, "system"),
    serverThreads: readThreads(roles.server),
    engine: cpuOf(table, roles.engine),
    client: cpuOf(table, roles.client),
    machineBusy: readMachineBusySeconds(),
  };
}

/** CPU seconds per role over a window, and its wall seconds. */
export interface WindowCpu {
  readonly wallSeconds: number;
  readonly serverSeconds: number;
  /** Of `serverSeconds`, in the kernel (writes to the client's sockets, reads, wake-ups, page faults). */
  readonly serverSystemSeconds: number;
  /** The server's CPU seconds by thread group over the window (see threadGroupSeconds). */
  readonly serverThreadSeconds: Readonly<Record<string, number>>;
  readonly engineSeconds: number;
  readonly clientSeconds: number;
  /** Every process of the machine (others' work included). */
  readonly machineBusySeconds: number;
}

export function windowCpu(a: CpuSnapshot, b: CpuSnapshot): WindowCpu {
  return {
    wallSeconds: (b.at - a.at) / 1000,
    serverSeconds: b.server - a.server,
    serverSystemSeconds: b.serverSystem - a.serverSystem,
    serverThreadSeconds: threadGroupSeconds(a.serverThreads, b.serverThreads),
    engineSeconds: b.engine - a.engine,
    clientSeconds: b.client - a.client,
    machineBusySeconds: b.machineBusy - a.machineBusy,
  };
}
