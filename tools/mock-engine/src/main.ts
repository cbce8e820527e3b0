#!/usr/bin/env node
// Child-process entry of the mock engine: parses the flags, starts one MockEngineCore per engine index,
// and owns the process lifecycle (signals, parent death, exit code).
import { MockEngineCore } from "./engine.js";
import { logEvent } from "./events.js";
import {
  helpText,
  MockEngineOptionsError,
  parseArgv,
  type ResolvedOptions,
  resolveOptions,
} from "./options.js";

/** How often the child checks that its parent is still alive (re-parenting changes process.ppid). */
const PARENT_POLL_MS = 250;
/** Upper bound for a graceful shutdown before the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 8_000;

function parse(): ResolvedOptions {
  try {
    const parsed = parseArgv(process.argv.slice(2));
    if (parsed === "help") {
      process.stdout.write(`${helpText()}\n`);
      process.exit(0);
    }
    return resolveOptions(parsed);
  } catch (error) {
    if (error instanceof MockEngineOptionsError) {
      process.stderr.write(`mock-engine: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

function main(): void {
  const options = parse();
  process.stdout.on("error", () => {}); // EPIPE once the parent is gone must not crash the engine

  const engines = new Map<number, MockEngineCore>();
  let exitCode = 0;
  let shuttingDown = false;

  const exit = (reason: string) => {
    logEvent({ event: "exit", code: exitCode, reason });
    process.exit(exitCode);
  };

  const shutdownAll = (reason: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    setTimeout(() => exit(`${reason} (shutdown deadline)`), SHUTDOWN_DEADLINE_MS).unref();
    void Promise.all([...engines.values()].map((engine) => engine.shutdown())).then(() => exit(reason));
  };

  const hooks = {
    onEnded(engine: MockEngineCore, reason: string) {
      engines.delete(engine.engineIndex);
      if (reason !== "shutdown") exitCode = 1;
      // Like separate engine processes: the process lives while one of its engines does.
      if (engines.size === 0 && !shuttingDown)
        exit(`all engines ended (last: engine ${engine.engineIndex} ${reason})`);
    },
    crash(engineIndex: number) {
      // An abrupt death (think OOM killer): no sentinel, no socket teardown, no exit event.
      void engineIndex;
      process.kill(process.pid, "SIGKILL");
    },
  };

  for (const index of options.engineIndices) engines.set(index, new MockEngineCore(index, options, hooks));

  process.on("SIGTERM", () => shutdownAll("SIGTERM"));
  process.on("SIGINT", () => shutdownAll("SIGINT"));
  // Launched by startMockEngine: the IPC channel closes when the parent exits or dies.
  process.on("disconnect", () => shutdownAll("parent disconnected"));
  // Launched any other way: a dead parent shows up as re-parenting. This ref'd timer also keeps the
  // process alive while zeromq receives are pending (they hold no handle of their own).
  const parentPid = process.ppid;
  setInterval(() => {
    if (process.ppid !== parentPid) shutdownAll("parent died");
  }, PARENT_POLL_MS);
  process.on("uncaughtException", (error) => {
    logEvent({ event: "fault", kind: "uncaught-exception", detail: String(error?.stack ?? error) });
    exitCode = 1;
    exit("uncaught exception");
  });

  logEvent({
    event: "started",
    pid: process.pid,
    mode: options.mode,
    engineIndices: options.engineIndices,
    stepMs: options.stepMs,
    tokensPerStep: options.tokensPerStep,
    echoPrompt: options.echoPrompt,
    timestamps: options.timestamps,
    vllmVersion: options.vllmVersion,
    logStats: options.logStats,
    faults: options.faults,
  });
  for (const engine of engines.values()) void engine.start();
}

main();
