// One child process that logs JSON-lines events on stdout (the mock engine, the mock DP coordinator):
// spawned with an IPC channel, resolved once it logs `started`, its events kept and awaitable, its stderr
// tail kept for the start error, and the ipc:// socket files it was given removed once it is gone.
import { type ChildProcess, type Serializable, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { removeStaleIpcFiles } from "./ipc-files.js";
import { MockEngineExitedError, MockEngineStartError, MockEngineTimeoutError } from "./launcher-errors.js";

export interface EventChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface EventChild<E> {
  readonly pid: number;
  /** Parsed JSON-lines log of the child's stdout, appended live. */
  readonly events: E[];
  /**
   * Resolves with the first event matching `predicate` among those logged from index `from` on (past or
   * future); default timeout 10 s.
   */
  waitForEvent(predicate: (e: E) => boolean, timeoutMs?: number, from?: number): Promise<E>;
  /** A message on the IPC channel (fd 3). */
  send(message: Serializable): void;
  kill(signal?: NodeJS.Signals): void;
  /** Settles once the child exited, its output was fully read and its stale ipc:// files were removed. */
  readonly exited: Promise<EventChildExit>;
  /** SIGTERM, wait for exit (SIGKILL after 5 s). Idempotent. */
  stop(): Promise<void>;
}

export interface EventChildOptions {
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** The addresses the child binds: their ipc:// socket files that nobody listens on any more go at exit. */
  ipcAddresses?: readonly (string | undefined)[];
}

const STDERR_KEEP = 16 * 1024;
const START_TIMEOUT_MS = 30_000;
const DEFAULT_WAIT_MS = 10_000;

/** Spawns `node mainPath ...argv`; resolves once the child logs `{"event":"started"}`. */
export function spawnEventChild<E extends { event: string }>(
  mainPath: string,
  argv: readonly string[],
  options: EventChildOptions = {},
): Promise<EventChild<E>> {
  const child: ChildProcess = spawn(process.execPath, [mainPath, ...argv], {
    // fd 3 is an IPC channel: commands for the child, and the child sees "disconnect" when this process goes away.
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    env: { ...process.env, ...(options.env ?? {}) },
  });
  return new Promise((resolve, reject) => {
    const events: E[] = [];
    const listeners = new Set<(e: E | null) => void>();
    let stderr = "";
    let exitInfo: EventChildExit | undefined;
    let started = false;
    // Ref'd until "started": the child's own handles are unref'd, so this keeps a bare
    // `await start...(...)` alive; it also bounds a child that never starts.
    const startTimer = setTimeout(() => {
      if (started) return;
      child.kill("SIGKILL");
      reject(new MockEngineTimeoutError(START_TIMEOUT_MS, events));
    }, START_TIMEOUT_MS);

    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEEP);
    });
    const lines = createInterface({ input: child.stdout!, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on("line", (line) => {
      let event: E;
      try {
        event = JSON.parse(line) as E;
      } catch {
        return; // not ours (e.g. a library printing to stdout)
      }
      events.push(event);
      for (const listener of [...listeners]) listener(event);
      if (!started && event.event === "started") {
        started = true;
        clearTimeout(startTimer);
        resolve(handle);
      }
    });

    const exited = new Promise<EventChildExit>((resolveExit) => {
      // "close" comes after "exit" and after stdout ended, so every event line has been parsed.
      child.on("close", (code, signal) => {
        exitInfo = { code, signal };
        // However the child ended (SIGKILL included), stale socket files at the addresses it was handed go:
        // libzmq leaves bound ipc:// files behind.
        removeStaleIpcFiles(options.ipcAddresses ?? []);
        clearTimeout(startTimer);
        for (const listener of [...listeners]) listener(null);
        if (!started) reject(new MockEngineStartError(code, signal, stderr));
        resolveExit(exitInfo);
      });
    });
    child.on("error", (error) => {
      if (!started) reject(error);
    });

    // The child must never keep this process alive: it dies with us (IPC disconnect / ppid watch).
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    (child.channel as unknown as { unref?: () => void } | undefined)?.unref?.();

    const handle: EventChild<E> = {
      pid: child.pid ?? -1,
      events,
      exited,
      waitForEvent(predicate, timeoutMs = DEFAULT_WAIT_MS, from = 0) {
        for (let i = from; i < events.length; i++)
          if (predicate(events[i]!)) return Promise.resolve(events[i]!);
        if (exitInfo) return Promise.reject(new MockEngineExitedError(exitInfo.code, exitInfo.signal));
        return new Promise((resolveEvent, rejectEvent) => {
          const timer = setTimeout(() => {
            listeners.delete(listener);
            rejectEvent(new MockEngineTimeoutError(timeoutMs, events.slice(-5)));
          }, timeoutMs);
          const listener = (event: E | null) => {
            if (event !== null && !predicate(event)) return;
            clearTimeout(timer);
            listeners.delete(listener);
            if (event === null)
              rejectEvent(new MockEngineExitedError(exitInfo?.code ?? null, exitInfo?.signal ?? null));
            else resolveEvent(event);
          };
          listeners.add(listener);
        });
      },
      send(message) {
        child.send(message);
      },
      kill(signal = "SIGTERM") {
        if (!exitInfo) child.kill(signal);
      },
      async stop() {
        if (exitInfo) return;
        child.kill("SIGTERM");
        // A ref'd timer keeps this process alive until the child is gone.
        const escalate = setTimeout(() => child.kill("SIGKILL"), 5_000);
        try {
          await exited;
        } finally {
          clearTimeout(escalate);
        }
      },
    };
  });
}
