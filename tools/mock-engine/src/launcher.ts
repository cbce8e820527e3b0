// Programmatic launcher: runs dist/main.js as a real child process and exposes its JSON-lines event log.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { MockEngineEvent } from "./events.js";
import { removeStaleIpcFiles } from "./ipc-files.js";
import { type MockEngineOptions, resolveOptions, toArgv } from "./options.js";

export interface MockEngineProcess {
  readonly pid: number;
  /** Parsed JSON-lines log of the child's stdout, appended live. */
  readonly events: MockEngineEvent[];
  /** Resolves with the first event (past or future) matching `predicate`; default timeout 10 s. */
  waitForEvent(predicate: (e: MockEngineEvent) => boolean, timeoutMs?: number): Promise<MockEngineEvent>;
  kill(signal?: NodeJS.Signals): void;
  /**
   * Settles once the child exited, its output was fully read and the socket files of the ipc:// addresses it
   * was given that nobody listens on any more were removed (also after a SIGKILL).
   */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, wait for exit (SIGKILL after 5 s). Idempotent. */
  stop(): Promise<void>;
}

abstract class MockEngineError extends Error {
  abstract readonly code: string;
}

/** dist/main.js does not exist: the package has not been built. */
export class MockEngineNotBuiltError extends MockEngineError {
  override readonly name = "MockEngineNotBuiltError";
  readonly code = "MOCK_ENGINE_NOT_BUILT";
  constructor(readonly path: string) {
    super(
      `The mock engine entry ${path} does not exist; build it first (pnpm --filter @vllm-engine-core/mock-engine build)`,
    );
  }
}

/** The child exited before it reported `started` (bad flags, missing dependency, ...). */
export class MockEngineStartError extends MockEngineError {
  override readonly name = "MockEngineStartError";
  readonly code = "MOCK_ENGINE_START";
  constructor(
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly stderr: string,
  ) {
    super(
      `The mock engine exited before it started (code ${exitCode}, signal ${signal}): ${stderr.trim() || "no stderr"}`,
    );
  }
}

/** waitForEvent gave up: no matching event within the timeout. */
export class MockEngineTimeoutError extends MockEngineError {
  override readonly name = "MockEngineTimeoutError";
  readonly code = "MOCK_ENGINE_TIMEOUT";
  constructor(
    readonly timeoutMs: number,
    lastEvents: readonly MockEngineEvent[],
  ) {
    super(
      `No matching mock-engine event within ${timeoutMs} ms; check the predicate or raise the timeout. ` +
        `Last events: ${lastEvents.map((e) => JSON.stringify(e)).join(" ")}`,
    );
  }
}

/** waitForEvent: the child exited without ever logging a matching event. */
export class MockEngineExitedError extends MockEngineError {
  override readonly name = "MockEngineExitedError";
  readonly code = "MOCK_ENGINE_EXITED";
  constructor(
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {
    super(`The mock engine exited (code ${exitCode}, signal ${signal}) without a matching event`);
  }
}

/** Path of the built child entry; from src/ (source-first tests) it is ../dist/main.js. */
export function mockEngineMainPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return basename(here) === "src" ? join(here, "..", "dist", "main.js") : join(here, "main.js");
}

const STDERR_KEEP = 16 * 1024;
const START_TIMEOUT_MS = 30_000;

export function startMockEngine(options: MockEngineOptions): Promise<MockEngineProcess> {
  try {
    resolveOptions(options); // fail fast in the caller, with the same checks as the child
  } catch (error) {
    return Promise.reject(error);
  }
  const mainPath = mockEngineMainPath();
  if (!existsSync(mainPath)) return Promise.reject(new MockEngineNotBuiltError(mainPath));

  const child: ChildProcess = spawn(process.execPath, [mainPath, ...toArgv(options)], {
    // fd 3 is an IPC channel only so that the child sees "disconnect" when this process goes away.
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    env: { ...process.env, ...(options.env ?? {}) },
  });
  return new Promise((resolve, reject) => {
    const events: MockEngineEvent[] = [];
    const listeners = new Set<(e: MockEngineEvent | null) => void>();
    let stderr = "";
    let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let started = false;
    // Ref'd until "started": the child's own handles are unref'd, so this keeps a bare
    // `await startMockEngine(...)` alive; it also bounds a child that never starts.
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
      let event: MockEngineEvent;
      try {
        event = JSON.parse(line) as MockEngineEvent;
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

    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
      // "close" comes after "exit" and after stdout ended, so every event line has been parsed.
      child.on("close", (code, signal) => {
        exitInfo = { code, signal };
        // However the child ended (SIGKILL included), stale socket files at the addresses it was handed go.
        removeStaleIpcFiles([options.handshakeAddress, options.inputAddress, options.outputAddress]);
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

    const handle: MockEngineProcess = {
      pid: child.pid ?? -1,
      events,
      exited,
      waitForEvent(predicate, timeoutMs = 10_000) {
        const found = events.find(predicate);
        if (found) return Promise.resolve(found);
        if (exitInfo) return Promise.reject(new MockEngineExitedError(exitInfo.code, exitInfo.signal));
        return new Promise((resolveEvent, rejectEvent) => {
          const timer = setTimeout(() => {
            listeners.delete(listener);
            rejectEvent(new MockEngineTimeoutError(timeoutMs, events.slice(-5)));
          }, timeoutMs);
          const listener = (event: MockEngineEvent | null) => {
            if (event === null) {
              clearTimeout(timer);
              listeners.delete(listener);
              rejectEvent(new MockEngineExitedError(exitInfo?.code ?? null, exitInfo?.signal ?? null));
            } else if (predicate(event)) {
              clearTimeout(timer);
              listeners.delete(listener);
              resolveEvent(event);
            }
          };
          listeners.add(listener);
        });
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
