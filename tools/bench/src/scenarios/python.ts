// Baseline: the same load consumed by a Python frontend loop (python/frontend_loop.py) run with Debian's
// /usr/bin/python3 + python3-zmq + python3-msgpack. The bench installs nothing: without them it is skipped.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { wireRequest } from "@vllm-engine-core/probe";
import { encodeAddRequest } from "@vllm-engine-core/protocol";
import type { ThroughputResult } from "../types.js";
import { CpuWindow } from "./cpu-window.js";
import { engineSpecFor, loadStreamIds, startLoadEngine, type ThroughputOptions } from "./load-engine.js";

export const PYTHON = "/usr/bin/python3";
const SCRIPT = fileURLToPath(new URL("../../python/frontend_loop.py", import.meta.url));

interface PythonOutcome {
  tokens?: number;
  outputs?: number;
  merged?: number;
  windowMs?: number;
  skipped?: string;
  python?: string;
  pyzmq?: string;
  msgpack?: string;
}

function skipped(streams: number, reason: string): ThroughputResult {
  return {
    runner: "python",
    streams,
    outputsPerSec: Number.NaN,
    tokens: 0,
    merged: 0,
    windowMs: 0,
    cpu: undefined,
    skipped: reason,
  };
}

export interface PythonThroughputOptions extends ThroughputOptions {
  /** The interpreter and its flags; default [PYTHON]. (Tests pass `-S`: no site-packages, no modules.) */
  python?: readonly string[];
}

const missingModules = (reason: string) => `${reason} (install python3-zmq python3-msgpack)`;

/** The script's `--check`: the skip reason when the modules are missing, undefined when they import. */
async function checkModules(python: readonly string[]): Promise<string | undefined> {
  const [command, ...flags] = python as [string, ...string[]];
  const child = spawn(command, [...flags, SCRIPT, "--check"], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const code = await new Promise<number | null | Error>((resolve) => {
    child.once("error", resolve);
    child.once("close", resolve);
  });
  if (code instanceof Error) return `${command} could not be started: ${code.message}`;
  const last = stdout.trim().split("\n").pop() ?? "";
  const answer = (last.startsWith("{") ? JSON.parse(last) : {}) as { ok?: boolean; skipped?: string };
  if (answer.skipped) return missingModules(answer.skipped);
  if (code === 0 && answer.ok) return undefined;
  throw new Error(`the Python module check failed (exit ${code}): ${stderr.trim().slice(-2000)}`);
}

export async function pythonThroughput(o: PythonThroughputOptions): Promise<ThroughputResult> {
  const python = o.python ?? [PYTHON];
  if (!existsSync(python[0]!)) return skipped(o.streams, `${python[0]} not found`);
  // Before the engine starts and before any write to the loop's stdin: a loop that lacks its modules
  // exits at once, and a config larger than the pipe buffer (1,024 streams) then fails with EPIPE.
  const missing = await checkModules(python);
  if (missing !== undefined) return skipped(o.streams, missing);
  const engine = await startLoadEngine(engineSpecFor(o));
  try {
    const requests = loadStreamIds(o.streams).map((id) =>
      encodeAddRequest(wireRequest(id, 100_000_000)).map((f) => Buffer.from(f).toString("hex")),
    );
    const [command, ...flags] = python as [string, ...string[]];
    const child = spawn(command, [...flags, SCRIPT], { stdio: ["pipe", "pipe", "pipe"] });
    const cpu = new CpuWindow(engine.pid, child.pid ?? -1);
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    // A loop that exits before reading its config (it should not after the check) makes the write fail
    // with EPIPE: that is reported with its exit below, not thrown from the stream.
    let stdinError: Error | undefined;
    child.stdin.on("error", (error) => {
      stdinError = error;
    });
    const exited = new Promise<number | null>((resolve) => {
      child.once("exit", resolve);
      child.once("error", () => resolve(null));
    });
    child.stdin.end(
      JSON.stringify({
        handshakeAddress: engine.handshakeAddress,
        requests,
        creditFile: engine.creditFile ?? null,
        warmupS: o.warmupMs / 1000,
        measureS: o.measureMs / 1000,
      }),
    );
    let outcome: PythonOutcome | undefined;
    for await (const line of createInterface({ input: child.stdout })) {
      if (line === "window-start") cpu.start();
      else if (line === "window-end") cpu.stop();
      else if (line.startsWith("{")) outcome = JSON.parse(line) as PythonOutcome;
    }
    const code = await exited;
    if (outcome?.skipped) return skipped(o.streams, missingModules(outcome.skipped));
    if (code !== 0 || outcome?.tokens === undefined || outcome.windowMs === undefined) {
      const write = stdinError ? ` (writing its config: ${stdinError.message})` : "";
      throw new Error(
        `the Python frontend loop failed (exit ${code})${write}: ${stderr.trim().slice(-2000)}`,
      );
    }
    return {
      runner: "python",
      streams: o.streams,
      outputsPerSec: (outcome.tokens * 1000) / outcome.windowMs,
      tokens: outcome.tokens,
      merged: outcome.merged ?? 0,
      windowMs: outcome.windowMs,
      cpu: cpu.report,
      notes: [`Python ${outcome.python}, pyzmq ${outcome.pyzmq}, msgpack ${outcome.msgpack}`],
    };
  } finally {
    await engine.stop();
  }
}
