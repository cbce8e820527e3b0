// A vLLM command run as its own process group, its stdout+stderr kept line by line. vLLM's `serve` starts
// children (the engine core, DP ranks, the API server's engine), so signals go to the whole group, and
// stop() returns only once the group leader exited (its children exit with it: vLLM's shutdown and the
// parent-death watch in its engine processes).
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { RealEngineExitedError, RealEngineLogTimeoutError } from "./errors.js";

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface VllmProcess {
  readonly pid: number;
  /** Every line of stdout and stderr so far, in arrival order (the two streams interleaved). */
  readonly logLines: readonly string[];
  /** The first line (already seen or future) matching `pattern`; rejects on timeout or exit. */
  waitForLog(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** Sends `signal` to the whole process group (default SIGKILL). */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM to the group, wait up to `graceMs` (default 15 s), then SIGKILL and wait. Idempotent. */
  stop(graceMs?: number): Promise<ExitInfo>;
  /** Settles once the process exited and its output was read. */
  readonly exited: Promise<ExitInfo>;
}

interface Waiter {
  pattern: RegExp;
  resolve: (line: string) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

const MAX_LINES = 50_000;

// Groups still running when this Node process exits are killed, so that a test run that ends without
// stop() (a crash, a bail-out) leaves no engine waiting for a handshake forever. So are they when the process
// is ended by SIGTERM, SIGINT or SIGHUP (a `timeout` around the test run, a runner stopping its workers),
// which skip "exit": the groups are killed, then the signal takes its default course unless someone else
// listens for it. A SIGKILLed Node process cannot do this; vLLM's headless engine then waits until killed.
const liveGroups = new Set<number>();
let exitHookInstalled = false;
function killLiveGroups(): void {
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  liveGroups.clear();
}
function killLiveGroupsOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", killLiveGroups);
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.once(signal, () => {
      killLiveGroups();
      // Ours was the only listener: re-raise so the signal ends the process as it would have.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}
/** After SIGKILL the kernel reaps at once; this only bounds a wait that should never be needed. */
const KILL_WAIT_MS = 10_000;

export function spawnVllmProcess(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): VllmProcess {
  const child: ChildProcess = spawn(command, args, {
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not spawn ${command}`);
  killLiveGroupsOnExit();
  liveGroups.add(pid);
  const lines: string[] = [];
  const waiters = new Set<Waiter>();
  let exitInfo: ExitInfo | null = null;

  const onLine = (line: string): void => {
    lines.push(line);
    if (lines.length > MAX_LINES) lines.splice(0, lines.length - MAX_LINES);
    for (const w of waiters) {
      if (w.pattern.test(line)) {
        waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve(line);
      }
    }
  };
  const streamsDone = [child.stdout, child.stderr].map((stream) => {
    if (!stream) return Promise.resolve();
    const rl = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    rl.on("line", onLine);
    return new Promise<void>((resolve) => rl.once("close", () => resolve()));
  });
  const exitSeen = new Promise<ExitInfo>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", () => resolve({ code: null, signal: null }));
  });
  const exited = Promise.all([exitSeen, ...streamsDone]).then(([info]) => {
    exitInfo = info;
    liveGroups.delete(pid);
    for (const w of waiters) {
      clearTimeout(w.timer);
      w.reject(new RealEngineExitedError(`a log line matching ${w.pattern}`, info.code, info.signal, lines));
    }
    waiters.clear();
    return info;
  });

  // `evenAfterExit`: members of the group can outlive the leader; the group id stays theirs until the last
  // one exits, so a kill right after the leader's exit still reaches only them.
  const signalGroup = (signal: NodeJS.Signals, evenAfterExit = false): void => {
    if (exitInfo && !evenAfterExit) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  };

  let stopping: Promise<ExitInfo> | null = null;
  return {
    pid,
    logLines: lines,
    exited,
    kill: (signal = "SIGKILL") => signalGroup(signal),
    waitForLog(pattern, timeoutMs) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      if (exitInfo) {
        return Promise.reject(
          new RealEngineExitedError(`a log line matching ${pattern}`, exitInfo.code, exitInfo.signal, lines),
        );
      }
      return new Promise<string>((resolve, reject) => {
        const waiter: Waiter = {
          pattern,
          resolve,
          reject,
          timer: setTimeout(() => {
            waiters.delete(waiter);
            reject(new RealEngineLogTimeoutError(pattern, timeoutMs, lines));
          }, timeoutMs),
        };
        waiters.add(waiter);
      });
    },
    stop(graceMs = 15_000) {
      stopping ??= (async () => {
        signalGroup("SIGTERM");
        let timer: NodeJS.Timeout | undefined;
        const graceOver = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), graceMs);
        });
        const first = await Promise.race([exited, graceOver]);
        clearTimeout(timer);
        if (first !== "timeout") {
          signalGroup("SIGKILL", true); // children that outlived the leader
          return first;
        }
        signalGroup("SIGKILL");
        const killWait = new Promise<ExitInfo>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`vLLM process ${pid} did not exit ${KILL_WAIT_MS} ms after SIGKILL`)),
            KILL_WAIT_MS,
          );
        });
        try {
          return await Promise.race([exited, killWait]);
        } finally {
          clearTimeout(timer);
        }
      })();
      return stopping;
    },
  };
}
