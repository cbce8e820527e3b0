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

export async function pythonThroughput(o: ThroughputOptions): Promise<ThroughputResult> {
  if (!existsSync(PYTHON)) return skipped(o.streams, `${PYTHON} not found`);
  const engine = await startLoadEngine(engineSpecFor(o));
  try {
    const requests = loadStreamIds(o.streams).map((id) =>
      encodeAddRequest(wireRequest(id, 100_000_000)).map((f) => Buffer.from(f).toString("hex")),
    );
    const child = spawn(PYTHON, [SCRIPT], { stdio: ["pipe", "pipe", "pipe"] });
    const cpu = new CpuWindow(engine.pid, child.pid ?? -1);
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
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
    if (outcome?.skipped)
      return skipped(o.streams, `${outcome.skipped} (install python3-zmq python3-msgpack)`);
    if (code !== 0 || outcome?.tokens === undefined || outcome.windowMs === undefined) {
      throw new Error(`the Python frontend loop failed (exit ${code}): ${stderr.trim().slice(-2000)}`);
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
