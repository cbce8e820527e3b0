// Runs the built CLI (dist/bin.js) as a real child process and watches every process it starts, so tests can
// assert output, exit code and that nothing it started is still running afterwards.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import { reservedTcpPorts } from "@vllm-engine-core/mock-engine";

export const CLI_BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
export const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));

if (!existsSync(CLI_BIN)) {
  throw new Error(`${CLI_BIN} is missing: build the CLI first (pnpm --filter @vllm-engine-core/cli build)`);
}

/** Parent pid of every process (from /proc), to find what a process started. */
function parentMap(): Map<number, number> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid ...": comm may contain spaces, so parse after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // exited meanwhile
    }
  }
  return parents;
}

export function descendants(pid: number): number[] {
  const parents = parentMap();
  const found: number[] = [];
  const frontier = [pid];
  while (frontier.length > 0) {
    const p = frontier.pop()!;
    for (const [child, parent] of parents) {
      if (parent === p && !found.includes(child)) {
        found.push(child);
        frontier.push(child);
      }
    }
  }
  return found;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped) is not running.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

export interface CliRun {
  readonly child: ChildProcess;
  readonly pid: number;
  stdout: string;
  stderr: string;
  /** Every process seen below the CLI while it ran (sampled every 50 ms). */
  readonly seen: Set<number>;
  /** Resolves when `pattern` appears on stdout or stderr (rejects after `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startCli(args: readonly string[], options: { env?: Record<string, string> } = {}): CliRun {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...options.env },
  });
  const seen = new Set<number>();
  const sample = setInterval(() => {
    if (child.pid !== undefined) for (const p of descendants(child.pid)) seen.add(p);
  }, 50);
  const listeners = new Set<() => void>();
  const run: CliRun = {
    child,
    pid: child.pid!,
    stdout: "",
    stderr: "",
    seen,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(run.stdout) || pattern.test(run.stderr)) {
            clearTimeout(timer);
            listeners.delete(check);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(
            new Error(`no ${pattern} within ${timeoutMs} ms; stdout: ${run.stdout} stderr: ${run.stderr}`),
          );
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    done: new Promise((resolve) => {
      child.on("close", (code, signal) => {
        clearInterval(sample);
        resolve({ code, signal });
      });
    }),
  };
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    run.stdout += chunk;
    for (const l of [...listeners]) l();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    run.stderr += chunk;
    for (const l of [...listeners]) l();
  });
  return run;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Processes the CLI started that are still alive after it exited. */
  leftRunning: number[];
  /** Every process seen below the CLI while it ran. */
  seen: number[];
}

/** Runs the CLI to completion (killed after `timeoutMs`). */
export async function runCli(
  args: readonly string[],
  options: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const run = startCli(args, options);
  const timer = setTimeout(() => run.child.kill("SIGKILL"), options.timeoutMs ?? 45_000);
  const { code } = await run.done;
  clearTimeout(timer);
  return { code, stdout: run.stdout, stderr: run.stderr, ...(await leftovers(run)) };
}

/** The processes `run` started that are alive after it exited (given a moment to be reaped). */
export async function leftovers(run: CliRun): Promise<{ leftRunning: number[]; seen: number[] }> {
  const seen = [...run.seen];
  let leftRunning = seen.filter(isAlive);
  for (let i = 0; i < 20 && leftRunning.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    leftRunning = leftRunning.filter(isAlive);
  }
  return { leftRunning, seen };
}

/** Parses every stdout line as JSON. */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A free TCP port on 127.0.0.1 below the ephemeral range (see reservedTcpPorts). */
export async function freePort(): Promise<number> {
  const [port] = await reservedTcpPorts(1);
  return port!;
}

/** A TCP server that holds a port (to make a bind fail). */
export function holdPort(): Promise<{ port: number; server: Server }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      resolve({ port: typeof address === "object" && address ? address.port : 0, server });
    });
  });
}

/** Starts `vllm-engine-core mock-engine --json …` and resolves once the engine process has started. */
export async function startStandaloneMock(extra: readonly string[]): Promise<CliRun> {
  const run = startCli(["mock-engine", "--json", ...extra]);
  await run.waitFor(/"event":"started"/);
  return run;
}

/** The mock engine's JSON events printed by `mock-engine --json`. */
export function mockEvents(run: CliRun): Record<string, unknown>[] {
  return jsonLines(run.stdout);
}

/**
 * stderr without the "waiting for N engine(s)" notice, which a loaded machine can make appear before a
 * connection completes (it is progress, not part of an error).
 */
export function errorLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => l.trim() !== "" && !/^waiting for \d+ engine\(s\) on /.test(l));
}
