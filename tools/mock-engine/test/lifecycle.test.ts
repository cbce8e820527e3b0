import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { FinishReason } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  expectedTokens,
  type MockEngineProcess,
  MockEngineStartError,
  startMockEngine,
} from "../src/index.js";
import { delay, ipcAddress, processGone, RawFrontend, request, waitUntil } from "./harness.js";

let frontend: RawFrontend | undefined;
let engine: MockEngineProcess | undefined;
afterEach(async () => {
  await engine?.stop();
  await frontend?.close();
  engine = undefined;
  frontend = undefined;
});

/** The engine pid a fixture prints on its first stdout line (rejects if the fixture exits first or stalls). */
function firstPid(fixture: ChildProcess, timeoutMs = 20_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`fixture printed no pid within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const lines = createInterface({ input: fixture.stdout! });
    lines.once("line", (line) => {
      clearTimeout(timer);
      resolve((JSON.parse(line) as { pid: number }).pid);
    });
    fixture.once("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`fixture exited (code ${code}) before printing the engine pid`));
    });
  });
}

describe("bootstrapped mode", () => {
  it("connects and registers without a handshake socket, then serves", async () => {
    frontend = await RawFrontend.create({ transport: "tcp" });
    engine = await startMockEngine({
      mode: "bootstrapped",
      ...frontend.bootstrapAddresses,
      engineIndices: [3, 4],
    });
    const r3 = await frontend.awaitRegistrations(3);
    const r4 = await frontend.awaitRegistrations(4);
    expect(r3.dataParallelRank).toBe(3);
    expect(r4.dataParallelRank).toBe(4);
    expect(frontend.handshakeMessages.items).toHaveLength(0);
    await frontend.add(4, request("boot", { maxTokens: 4 }));
    const { tokens, messages } = await frontend.finished("boot");
    expect(tokens).toEqual(expectedTokens("boot", [1, 2, 3], 4));
    expect(messages.every((m) => m.engineIndex === 4)).toBe(true);
    expect(engine.events.some((e) => e.event === "hello")).toBe(false);
  });

  it("registers even when the frontend binds after the engine connected", async () => {
    const inputAddress = ipcAddress("late-in");
    const outputAddress = ipcAddress("late-out");
    engine = await startMockEngine({ mode: "bootstrapped", inputAddress, outputAddress });
    await delay(200);
    const { Router } = await import("zeromq");
    const input = new Router({ linger: 0 });
    await input.bind(inputAddress);
    try {
      const [identity, payload] = await input.receive();
      expect([...identity!]).toEqual([0, 0]);
      expect(payload!.length).toBeGreaterThan(0);
    } finally {
      input.close();
    }
  });
});

describe("process lifecycle", () => {
  it("SIGTERM: in-flight requests get ABORT outputs, then the process exits 0", async () => {
    frontend = await RawFrontend.create();
    engine = await startMockEngine({ handshakeAddress: frontend.handshakeAddress, stepMs: 5 });
    await frontend.connect([0]);
    await frontend.add(0, request("inflight", { maxTokens: 100_000 }));
    await frontend.received.wait((m) => m.kind === "outputs", 5_000, "first output");
    engine.kill("SIGTERM");
    const { last, messages } = await frontend.finished("inflight");
    expect(last.finishReason).toBe(FinishReason.ABORT);
    expect(messages.at(-1)!.finishedRequests).toEqual(["inflight"]);
    expect(await engine.exited).toEqual({ code: 0, signal: null });
    expect(engine.events.at(-1)).toMatchObject({ event: "exit", code: 0, reason: "SIGTERM" });
    expect(frontend.received.items.some((m) => m.kind === "dead")).toBe(false);
  });

  it("stop() works while the engine still waits for INIT, and is idempotent", async () => {
    engine = await startMockEngine({ handshakeAddress: ipcAddress("nobody") });
    await engine.waitForEvent((e) => e.event === "hello");
    await engine.stop();
    await engine.stop();
    expect((await engine.exited).code).toBe(0);
  });

  it("rejects bad options in the caller and reports a child that fails to start", async () => {
    await expect(startMockEngine({ mode: "handshake" })).rejects.toMatchObject({
      code: "MOCK_ENGINE_OPTIONS",
    });
    await expect(
      startMockEngine({ handshakeAddress: "ipc:///tmp/x", engineIndices: [1, 1] }),
    ).rejects.toMatchObject({
      name: "MockEngineOptionsError",
    });
    // An address zeromq rejects makes the child fail at startup: it exits 1 after a fault event.
    engine = await startMockEngine({ handshakeAddress: "bogus://nowhere" });
    const exit = await engine.exited;
    expect(exit.code).toBe(1);
    expect(engine.events.some((e) => e.event === "fault" && e.kind === "startup-failed")).toBe(true);
    await expect(engine.waitForEvent((e) => e.event === "ready", 1_000)).rejects.toMatchObject({
      code: "MOCK_ENGINE_EXITED",
    });
  });

  it("a child that dies before `started` rejects startMockEngine with MockEngineStartError (stderr attached)", async () => {
    const failure = await startMockEngine({
      handshakeAddress: ipcAddress("never"),
      env: { NODE_OPTIONS: "--require /nonexistent/preload.cjs" },
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(MockEngineStartError);
    expect((failure as MockEngineStartError).exitCode).not.toBe(0);
    expect((failure as MockEngineStartError).message).toContain("preload.cjs");
  });

  it("a forgotten engine does not keep its parent alive, and dies with it", async () => {
    const fixture = fileURLToPath(new URL("./fixtures/forgetful.mjs", import.meta.url));
    const parent = spawn(process.execPath, [fixture, ipcAddress("forgotten")], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise<number | null>((resolve, reject) => {
      parent.on("exit", (code) => resolve(code));
      setTimeout(
        () => reject(new Error("the forgetful parent did not exit by itself within 15 s")),
        15_000,
      ).unref();
    });
    try {
      const pid = await firstPid(parent);
      expect(await exited).toBe(0);
      await waitUntil(() => processGone(pid), 10_000, `engine ${pid} exits after its parent ended`);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  for (const mode of ["launcher", "cli"] as const) {
    it(`the engine dies when its parent dies (${mode === "launcher" ? "IPC disconnect" : "ppid watch"})`, async () => {
      const fixture = fileURLToPath(new URL("./fixtures/parent.mjs", import.meta.url));
      const parent = spawn(process.execPath, [fixture, mode, ipcAddress(`orphan-${mode}`)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      try {
        const pid = await firstPid(parent);
        expect(processGone(pid)).toBe(false);
        parent.kill("SIGKILL");
        await waitUntil(() => processGone(pid), 10_000, `engine ${pid} exits after its parent died`);
      } finally {
        parent.kill("SIGKILL");
      }
    });
  }
});
