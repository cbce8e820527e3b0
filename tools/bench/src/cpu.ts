// CPU time of processes and threads from /proc (Linux), to tell which one saturates during a run.
import { readdirSync, readFileSync } from "node:fs";

/** Kernel clock ticks per second for /proc stat times (USER_HZ is 100 on Linux x86-64 and arm64). */
const TICKS_PER_SECOND = 100;

/**
 * The fields of a /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat line from field 3 (state) on: the command
 * name (field 2) is in parentheses and may contain spaces, so the fields restart after the last ')'.
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** utime + stime (fields 14 and 15), seconds, from `statFields`. */
export function cpuSecondsOf(fields: readonly string[]): number {
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** stime alone (time in the kernel: system calls, page faults, softirqs run on the way), seconds. */
export function systemSecondsOf(fields: readonly string[]): number {
  return Number(fields[12]) / TICKS_PER_SECOND;
}

/**
 * utime and stime, seconds, of one thread of this process (`tid`: the main thread's is the pid), or undefined
 * off Linux or once the thread is gone.
 */
export function threadTimes(tid: number): { user: number; system: number } | undefined {
  const stat = read(`/proc/self/task/${tid}/stat`);
  if (stat === undefined) return undefined;
  const fields = statFields(stat);
  return { user: Number(fields[11]) / TICKS_PER_SECOND, system: systemSecondsOf(fields) };
}

/** utime + stime in seconds from the text of /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat. */
export function parseStatCpuSeconds(stat: string): number {
  return cpuSecondsOf(statFields(stat));
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
