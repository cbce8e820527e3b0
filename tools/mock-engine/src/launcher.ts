// Programmatic launcher: runs dist/main.js as a real child process and exposes its JSON-lines event log.
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnEventChild } from "./event-child.js";
import type { MockEngineEvent } from "./events.js";
import { MockEngineNotBuiltError } from "./launcher-errors.js";
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

/** Path of the built child entry; from src/ (source-first tests) it is ../dist/main.js. */
export function mockEngineMainPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return basename(here) === "src" ? join(here, "..", "dist", "main.js") : join(here, "main.js");
}

export function startMockEngine(options: MockEngineOptions): Promise<MockEngineProcess> {
  try {
    resolveOptions(options); // fail fast in the caller, with the same checks as the child
  } catch (error) {
    return Promise.reject(error);
  }
  const mainPath = mockEngineMainPath();
  if (!existsSync(mainPath)) return Promise.reject(new MockEngineNotBuiltError(mainPath));
  return spawnEventChild<MockEngineEvent>(mainPath, toArgv(options), {
    env: options.env ?? {},
    ipcAddresses: [options.handshakeAddress, options.inputAddress, options.outputAddress],
  }).then((child) => ({
    pid: child.pid,
    events: child.events,
    exited: child.exited,
    waitForEvent: (predicate, timeoutMs) => child.waitForEvent(predicate, timeoutMs),
    kill: (signal) => child.kill(signal),
    stop: () => child.stop(),
  }));
}
