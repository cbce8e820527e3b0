// Process lifetime, in child processes running the built package like an application: the runtime keeps
// the process alive only while a connection is open, ends by itself after the last one closes, survives
// process.exit() with an open connection, and refuses to start without a main-thread host.
import { spawn } from "node:child_process";
import { removeStaleIpcFiles } from "@vllm-engine-core/mock-engine";
import { describe, expect, it } from "vitest";
import { fixture, ipcAddress } from "./helpers.ts";

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  exitedAt: number;
}

function run(script: string, args: string[], timeoutMs = 30_000): Promise<Outcome> {
  // Plain node: the built packages, no test-runner flags.
  const child = spawn(process.execPath, [fixture(script), ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve) =>
    child.once("close", (code, signal) => {
      clearTimeout(killer);
      // The child's transport removes what it bound unless it was killed: then the parent does.
      removeStaleIpcFiles(args);
      resolve({ code, signal, stdout, stderr, exitedAt: Date.now() });
    }),
  );
}

describe("process lifetime", () => {
  it("importing the package installs no listener and no exit handler; the host installs its listener", async () => {
    const outcome = await run("import-side-effects.mjs", []);
    expect(outcome.code).toBe(0);
    const report = JSON.parse(outcome.stdout.trim()) as Record<
      string,
      { exit: number; workerMessage: number }
    >;
    expect(report.afterImport).toEqual(report.before);
    // The rendezvous listener; the exit handler comes with the first runtime spawned, not with the host.
    expect(report.afterHost).toEqual({
      exit: report.before!.exit,
      workerMessage: report.before!.workerMessage + 1,
    });
  });

  it("exits by itself after the last connection (opened on main) is shut down", async () => {
    const outcome = await run("exit-after-close.mjs", [ipcAddress("exit-main"), "main"]);
    expect({ code: outcome.code, signal: outcome.signal, stderr: outcome.stderr }).toEqual({
      code: 0,
      signal: null,
      stderr: "",
    });
    const report = JSON.parse(outcome.stdout.trim()) as { tokens: number[]; closedAt: number };
    expect(report.tokens).toEqual([5, 4]);
    // Nothing lingers: no idle timer, link or sentinel holds the loop after the close.
    expect(outcome.exitedAt - report.closedAt).toBeLessThan(2_000);
  });

  it("exits by itself when a worker thread opened and shut down the connection", async () => {
    const outcome = await run("exit-after-close.mjs", [ipcAddress("exit-worker"), "worker"]);
    expect({ code: outcome.code, signal: outcome.signal, stderr: outcome.stderr }).toEqual({
      code: 0,
      signal: null,
      stderr: "",
    });
    const report = JSON.parse(outcome.stdout.trim()) as { tokens: number[]; closedAt: number };
    expect(report.tokens).toEqual([4]);
    expect(outcome.exitedAt - report.closedAt).toBeLessThan(2_000);
  });

  it("process.exit() with an open, streaming connection exits with its code (no zeromq abort)", async () => {
    const outcome = await run("exit-with-open-connection.mjs", [ipcAddress("exit-open")]);
    expect({ code: outcome.code, signal: outcome.signal, stderr: outcome.stderr }).toEqual({
      code: 7,
      signal: null,
      stderr: "",
    });
  });

  it("a worker thread cannot connect when the main thread has no runtime host", async () => {
    const outcome = await run("no-host.mjs", []);
    expect({ code: outcome.code, signal: outcome.signal }).toEqual({ code: 0, signal: null });
    const report = JSON.parse(outcome.stdout.trim()) as {
      name: string;
      code: string;
      message: string;
      ms: number;
    };
    expect(report).toMatchObject({ name: "RuntimeHostUnavailableError", code: "RUNTIME_HOST_UNAVAILABLE" });
    expect(report.message).toContain("installRuntimeHost()");
    // At once: no main-thread listener means the rendezvous fails on delivery, nothing waits for a timeout.
    expect(report.ms).toBeLessThan(1_000);
  });
});
