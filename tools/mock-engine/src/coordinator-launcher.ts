// Launcher of the mock DP coordinator (dist/coordinator.js) as a real child process; never loads zeromq.
// The coordinator plays the frontend-facing side of vLLM's DPCoordinatorProc (see coordinator-main.ts).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { CoordinatorCommand, MockCoordinatorEvent, MockEngineCounts } from "./coordinator-events.js";
import { removeStaleIpcFiles } from "./ipc-files.js";
import {
  MockEngineExitedError,
  MockEngineNotBuiltError,
  MockEngineStartError,
  MockEngineTimeoutError,
} from "./launcher.js";

export interface MockCoordinatorOptions {
  /** The front publish XPUB's bind address (frontends connect their XSUB here). */
  address: string;
  /** Engines in the published counts (DP size). */
  engineCount: number;
  /**
   * The engine-facing XPUB and PULL to bind (INIT's coordinator_input / coordinator_output for the engines):
   * then the counts are the engines' own, published every `statsIntervalMs` (default 100) while they change.
   * Without it the test publishes the counts (`publish`).
   */
  engineSide?: { publishAddress: string; outputAddress: string; statsIntervalMs?: number };
}

type Published = Extract<MockCoordinatorEvent, { event: "published" }>;

export interface MockCoordinatorProcess {
  readonly pid: number;
  readonly address: string;
  /** Parsed JSON-lines log of the child's stdout, appended live. */
  readonly events: MockCoordinatorEvent[];
  waitForEvent(
    predicate: (e: MockCoordinatorEvent) => boolean,
    timeoutMs?: number,
  ): Promise<MockCoordinatorEvent>;
  /** Resolves once `n` frontends subscribed. */
  subscribers(n: number, timeoutMs?: number): Promise<void>;
  /** Publishes `(counts, wave, engines_running)` now; resolves with what was published (no engine side only). */
  publish(
    counts: MockEngineCounts[],
    state?: { wave?: number; enginesRunning?: boolean },
  ): Promise<Published>;
  /** SIGTERM, wait for exit (SIGKILL after 5 s). Idempotent. */
  stop(): Promise<void>;
}

/** Path of the built child entry; from src/ (source-first tests) it is ../dist/coordinator.js. */
export function mockCoordinatorMainPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return basename(here) === "src" ? join(here, "..", "dist", "coordinator.js") : join(here, "coordinator.js");
}

const START_TIMEOUT_MS = 30_000;

export function startMockCoordinator(options: MockCoordinatorOptions): Promise<MockCoordinatorProcess> {
  const mainPath = mockCoordinatorMainPath();
  if (!existsSync(mainPath)) return Promise.reject(new MockEngineNotBuiltError(mainPath));
  const side = options.engineSide;
  const argv = ["--front", options.address, "--engines", String(options.engineCount)];
  if (side !== undefined) {
    argv.push("--back-publish", side.publishAddress, "--back-output", side.outputAddress);
    if (side.statsIntervalMs !== undefined) argv.push("--stats-interval-ms", String(side.statsIntervalMs));
  }
  const child: ChildProcess = spawn(process.execPath, [mainPath, ...argv], {
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  return new Promise((resolve, reject) => {
    const events: MockCoordinatorEvent[] = [];
    const listeners = new Set<(e: MockCoordinatorEvent | null) => void>();
    let stderr = "";
    let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let started = false;
    const startTimer = setTimeout(() => {
      if (started) return;
      child.kill("SIGKILL");
      reject(new MockEngineTimeoutError(START_TIMEOUT_MS, []));
    }, START_TIMEOUT_MS);
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-16 * 1024);
    });
    createInterface({ input: child.stdout!, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
      let event: MockCoordinatorEvent;
      try {
        event = JSON.parse(line) as MockCoordinatorEvent;
      } catch {
        return;
      }
      events.push(event);
      for (const listener of [...listeners]) listener(event);
      if (!started && event.event === "started") {
        started = true;
        clearTimeout(startTimer);
        resolve(handle);
      }
    });
    const exited = new Promise<void>((resolveExit) => {
      child.on("close", (code, signal) => {
        exitInfo = { code, signal };
        // libzmq leaves the bound ipc:// files behind
        removeStaleIpcFiles([options.address, side?.publishAddress, side?.outputAddress]);
        clearTimeout(startTimer);
        for (const listener of [...listeners]) listener(null);
        if (!started) reject(new MockEngineStartError(code, signal, stderr));
        resolveExit();
      });
    });
    child.on("error", (error) => {
      if (!started) reject(error);
    });
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    (child.channel as unknown as { unref?: () => void } | undefined)?.unref?.();

    const waitFrom = (
      from: number,
      predicate: (e: MockCoordinatorEvent) => boolean,
      timeoutMs: number,
    ): Promise<MockCoordinatorEvent> => {
      const found = events.slice(from).find(predicate);
      if (found) return Promise.resolve(found);
      if (exitInfo) return Promise.reject(new MockEngineExitedError(exitInfo.code, exitInfo.signal));
      return new Promise((resolveEvent, rejectEvent) => {
        const timer = setTimeout(() => {
          listeners.delete(listener);
          rejectEvent(new MockEngineTimeoutError(timeoutMs, []));
        }, timeoutMs);
        const listener = (event: MockCoordinatorEvent | null) => {
          if (event !== null && !predicate(event)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          if (event === null)
            rejectEvent(new MockEngineExitedError(exitInfo?.code ?? null, exitInfo?.signal ?? null));
          else resolveEvent(event);
        };
        listeners.add(listener);
      });
    };

    const handle: MockCoordinatorProcess = {
      pid: child.pid ?? -1,
      address: options.address,
      events,
      waitForEvent: (predicate, timeoutMs = 10_000) => waitFrom(0, predicate, timeoutMs),
      async subscribers(n, timeoutMs = 10_000) {
        const count = () => events.filter((e) => e.event === "subscription" && e.subscribe).length;
        if (count() >= n) return;
        await waitFrom(0, () => count() >= n, timeoutMs);
      },
      async publish(counts, state = {}) {
        const from = events.length;
        const command: CoordinatorCommand = { op: "publish", counts, ...state };
        child.send(command);
        return (await waitFrom(
          from,
          (e) => e.event === "published" && e.counts !== null,
          10_000,
        )) as Published;
      },
      async stop() {
        if (exitInfo) return;
        child.kill("SIGTERM");
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
