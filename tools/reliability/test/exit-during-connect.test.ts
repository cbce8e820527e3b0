// Issue 10 §8: a program that ends while EngineCoreClient.connect() is in flight (or once connected) must end
// with the exit code it chose, with nothing from the native layer on stderr, and leave every address free
// for the next process. Each case runs tools/reliability/test/fixtures/exit-during-connect.mjs in its own
// process: one exit path × one connect stage. Before the fix, every in-flight stage died with
// "terminate called after throwing an instance of 'Napi::Error'" (SIGABRT, exit code 134).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { reservedTcpPorts } from "@vllm-engine-core/mock-engine";
import { describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/exit-during-connect.mjs", import.meta.url));

type ExitPath = "exit" | "signal" | "uncaught" | "worker" | "worker-uncaught" | "worker-natural";
type Stage = "same-tick" | "hello" | "ready" | "registration" | "coordinator" | "bootstrapped" | "connected";

/** The exit code each path chooses (an uncaught exception is Node's 1). */
const CODES: Record<ExitPath, number> = {
  exit: 7,
  signal: 143,
  uncaught: 1,
  worker: 5,
  "worker-uncaught": 1,
  "worker-natural": 6,
};
const IN_FLIGHT: Stage[] = ["same-tick", "hello", "ready", "registration", "coordinator", "bootstrapped"];

interface Addresses {
  handshake: string;
  input: string;
  output: string;
}

async function freeTcpAddress(): Promise<string> {
  const [port] = await reservedTcpPorts(1);
  return `tcp://127.0.0.1:${port}`;
}

async function addresses(transport: "tcp" | "ipc"): Promise<Addresses> {
  if (transport === "ipc") {
    const tag = randomUUID().slice(0, 8);
    const ipc = (name: string) => `ipc://${join(tmpdir(), `vec-rel-exit-${name}-${tag}.sock`)}`;
    return { handshake: ipc("hs"), input: ipc("in"), output: ipc("out") };
  }
  return { handshake: await freeTcpAddress(), input: await freeTcpAddress(), output: await freeTcpAddress() };
}

/**
 * Binds the address with a plain Node server in this process and releases it: fails with EADDRINUSE while
 * anything still listens there (tcp), or while a socket file is left at the path (ipc).
 */
async function bindFreshly(address: string): Promise<void> {
  const server = createServer();
  const listening = new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.once("listening", resolve);
  });
  if (address.startsWith("ipc://")) {
    server.listen(address.slice("ipc://".length));
  } else {
    const { hostname, port } = new URL(address.replace(/^tcp:/, "http:"));
    server.listen(Number(port), hostname);
  }
  try {
    await listening;
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (address.startsWith("ipc://")) rmSync(address.slice("ipc://".length), { force: true });
  }
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** From the moment the program chose to end to the child's exit. */
  endingMs: number;
}

function runScenario(scenario: { path: ExitPath; stage: Stage; code: number; addresses: Addresses }) {
  const child = spawn(process.execPath, [fixture, JSON.stringify(scenario)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  let exitedAt = 0;
  child.once("exit", () => {
    exitedAt = Date.now();
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), 40_000);
  return new Promise<Outcome>((resolve) =>
    child.once("close", (code, signal) => {
      clearTimeout(killer);
      const endingAt = Number(/ending at (\d+)/.exec(stdout)?.[1] ?? Number.NaN);
      resolve({ code, signal, stderr, endingMs: exitedAt - endingAt });
    }),
  );
}

/** What an uncaught exception prints by itself: the source line, the stack and Node's version line. */
function withoutUncaughtReport(stderr: string, stage: Stage): string {
  const report = new RegExp(
    `^[^]*?Error: uncaught at stage ${stage}\\n(?:\\s+at .*\\n)*\\nNode\\.js ${process.version.replace(/\./g, "\\.")}\\n`,
  );
  expect(stderr).toMatch(report);
  return stderr.replace(report, "");
}

async function expectCleanExit(path: ExitPath, stage: Stage, transport: "tcp" | "ipc" = "tcp") {
  const scenario = { path, stage, code: CODES[path], addresses: await addresses(transport) };
  try {
    await checkExit(scenario, await runScenario(scenario));
  } finally {
    // A failed case (a process that aborted) must not leave its socket files behind either.
    for (const address of Object.values(scenario.addresses)) {
      if (address.startsWith("ipc://")) rmSync(address.slice("ipc://".length), { force: true });
    }
  }
}

async function checkExit(
  scenario: { path: ExitPath; stage: Stage; code: number; addresses: Addresses },
  outcome: Outcome,
) {
  const { path, stage } = scenario;
  const stderr = path === "uncaught" ? withoutUncaughtReport(outcome.stderr, stage) : outcome.stderr;
  expect({ code: outcome.code, signal: outcome.signal, stderr }).toEqual({
    code: CODES[path],
    signal: null,
    stderr: "",
  });
  // Promptly: not after the supervisor's 2 s close wait ran out (typically a few ms; generous under load).
  expect(outcome.endingMs).toBeLessThan(1_500);
  // A new process (this one) can bind every address at once.
  for (const address of Object.values(scenario.addresses)) await bindFreshly(address);
  console.log(
    `[reliability] exit during connect (${path}, ${stage}, ${scenario.addresses.handshake.split(":")[0]}): ended ${outcome.endingMs} ms after the program chose to`,
  );
}

describe("process.exit() on the main thread", () => {
  for (const stage of [...IN_FLIGHT, "connected"] as const) {
    it(`at stage ${stage}`, () => expectCleanExit("exit", stage));
  }
  // ipc: also no socket file left behind (a plain bind of the path fails while one exists).
  for (const stage of ["hello", "ready", "bootstrapped", "connected"] as const) {
    it(`at stage ${stage} (ipc)`, () => expectCleanExit("exit", stage, "ipc"));
  }
});

describe("a SIGTERM handler that calls process.exit()", () => {
  for (const stage of [...IN_FLIGHT, "connected"] as const) {
    it(`at stage ${stage}`, () => expectCleanExit("signal", stage));
  }
});

describe("an uncaught exception on the main thread", () => {
  for (const stage of [...IN_FLIGHT, "connected"] as const) {
    it(`at stage ${stage}`, () => expectCleanExit("uncaught", stage));
  }
});

describe("process.exit() on the worker thread that connects, then on the main thread", () => {
  for (const stage of [...IN_FLIGHT, "connected"] as const) {
    it(`at stage ${stage}`, () => expectCleanExit("worker", stage));
  }
});

describe("an uncaught exception on the worker thread that connects, then process.exit() on main", () => {
  for (const stage of [...IN_FLIGHT, "connected"] as const) {
    it(`at stage ${stage}`, () => expectCleanExit("worker-uncaught", stage));
  }
});

// The main thread lets the process end by itself. Not "connected": an open connection keeps the process
// alive until shutdown() by design (it belongs to the process, not to the thread that opened it).
describe("process.exit() on the worker thread that connects, the process then ends by itself", () => {
  for (const stage of IN_FLIGHT) {
    it(`at stage ${stage}`, () => expectCleanExit("worker-natural", stage));
  }
});
