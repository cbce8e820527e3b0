// Launcher of the mock DP coordinator (dist/coordinator.js) as a real child process; never loads zeromq.
// The coordinator plays the frontend-facing side of vLLM's DPCoordinatorProc (see coordinator-main.ts).
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CoordinatorCommand, MockCoordinatorEvent, MockEngineCounts } from "./coordinator-events.js";
import { spawnEventChild } from "./event-child.js";
import { MockEngineNotBuiltError } from "./launcher-errors.js";

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

export function startMockCoordinator(options: MockCoordinatorOptions): Promise<MockCoordinatorProcess> {
  const mainPath = mockCoordinatorMainPath();
  if (!existsSync(mainPath)) return Promise.reject(new MockEngineNotBuiltError(mainPath));
  const side = options.engineSide;
  const argv = ["--front", options.address, "--engines", String(options.engineCount)];
  if (side !== undefined) {
    argv.push("--back-publish", side.publishAddress, "--back-output", side.outputAddress);
    if (side.statsIntervalMs !== undefined) argv.push("--stats-interval-ms", String(side.statsIntervalMs));
  }
  return spawnEventChild<MockCoordinatorEvent>(mainPath, argv, {
    ipcAddresses: [options.address, side?.publishAddress, side?.outputAddress],
  }).then((child) => ({
    pid: child.pid,
    address: options.address,
    events: child.events,
    waitForEvent: (predicate, timeoutMs) => child.waitForEvent(predicate, timeoutMs),
    async subscribers(n, timeoutMs) {
      const count = () => child.events.filter((e) => e.event === "subscription" && e.subscribe).length;
      if (count() >= n) return;
      await child.waitForEvent(() => count() >= n, timeoutMs);
    },
    async publish(counts, state = {}) {
      const from = child.events.length;
      const command: CoordinatorCommand = { op: "publish", counts, ...state };
      child.send(command);
      return (await child.waitForEvent(
        (e) => e.event === "published" && e.counts !== null,
        undefined,
        from,
      )) as Published;
    },
    stop: () => child.stop(),
  }));
}
