// CPU time of processes and threads from /proc (Linux), to tell which one saturates during a run.
import { readdirSync, readFileSync } from "node:fs";

/** Kernel clock ticks per second for /proc stat times (USER_HZ is 100 on Linux x86-64 and arm64). */
const TICKS_PER_SECOND = 100;

/** utime + stime in seconds from the text of /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat. */
export function parseStatCpuSeconds(stat: string): number {
  // The command name (field 2) is in parentheses and may contain spaces: fields restart after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state); utime and stime are fields 14 and 15.
  return (Number(rest[11]) + Number(rest[12])) / TICKS_PER_SECOND;
}

/** stime alone (time in the kernel: system calls, page faults, softirqs run on the way), seconds. */
export function parseStatSystemSeconds(stat: string): number {
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(rest[12]) / TICKS_PER_SECOND;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

export interface CpuSample {
  at: number;
  /** pid → CPU seconds. */
  processes: Map<number, number>;
  /** tid → CPU seconds for the threads of this process. */
  threads: Map<number, number>;
}

export function cpuAvailable(): boolean {
  return process.platform === "linux" && read("/proc/self/stat") !== undefined;
}

export function sampleCpu(pids: readonly number[]): CpuSample {
  const processes = new Map<number, number>();
  for (const pid of pids) {
    const stat = read(`/proc/${pid}/stat`);
    if (stat !== undefined) processes.set(pid, parseStatCpuSeconds(stat));
  }
  const threads = new Map<number, number>();
  let tids: string[] = [];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    // not Linux
  }
  for (const tid of tids) {
    const stat = read(`/proc/self/task/${tid}/stat`);
    if (stat !== undefined) threads.set(Number(tid), parseStatCpuSeconds(stat));
  }
  return { at: performance.now(), processes, threads };
}

/** CPU utilisation (1.0 = one core busy) of each process and thread between two samples. */
export function cpuBetween(
  a: CpuSample,
  b: CpuSample,
): { processes: Map<number, number>; threads: Map<number, number> } {
  const seconds = (b.at - a.at) / 1000;
  const diff = (x: Map<number, number>, y: Map<number, number>) => {
    const out = new Map<number, number>();
    for (const [k, v] of y) {
      const before = x.get(k);
      if (before !== undefined && seconds > 0) out.set(k, (v - before) / seconds);
    }
    return out;
  };
  return { processes: diff(a.processes, b.processes), threads: diff(a.threads, b.threads) };
}
