// Ctrl-C at any point closes everything and exits 130: mid-handshake (no engine yet; a mock engine that never
// sends READY), mid-generate, mid-bench, and a standalone engine sees the interrupted request aborted.
import { describe, expect, test } from "vitest";
import { freePort, leftovers, mockEvents, startCli, startStandaloneMock } from "./helpers.js";

async function interrupt(run: ReturnType<typeof startCli>) {
  run.child.kill("SIGINT");
  const { code } = await run.done;
  return { code, ...(await leftovers(run)) };
}

describe.concurrent("SIGINT", () => {
  test("mid-handshake, no engine dialing in yet: exit 130", async () => {
    const port = await freePort();
    const run = startCli(["info", "--handshake-address", `tcp://127.0.0.1:${port}`]);
    await run.waitFor(/waiting for 1 engine\(s\) on handshake/);
    const r = await interrupt(run);
    expect(r.code, run.stderr).toBe(130);
    expect(run.stderr).toMatch(
      /^vllm-engine-core: interrupted by SIGINT; everything this command started was closed$/m,
    );
    expect(run.stdout).toBe("");
  });

  test("mid-handshake with --mock (the engine never sends READY): exit 130, the mock engine is gone", async () => {
    const run = startCli(["info", "--mock", "--mock-fault", "no-ready"]);
    await run.waitFor(/waiting for 1 engine\(s\) on mock engine \(pid \d+\)/);
    expect(run.seen.size, "the mock engine runs").toBeGreaterThan(0);
    const r = await interrupt(run);
    expect(r.code, run.stderr).toBe(130);
    expect(r.leftRunning).toEqual([]);
  });

  test("mid-generate with --mock: exit 130, the mock engine is gone", async () => {
    const run = startCli([
      "generate",
      "--mock",
      "--mock-step-ms",
      "20",
      "--prompt-token-ids",
      "1,2,3",
      "--max-tokens",
      "100000",
    ]);
    await run.waitFor(/^\d+ \d+ \d+/);
    const r = await interrupt(run);
    expect(r.code, run.stderr).toBe(130);
    expect(r.seen.length).toBeGreaterThan(0);
    expect(r.leftRunning).toEqual([]);
  });

  test("mid-bench with --mock: exit 130, the mock engine is gone", async () => {
    const run = startCli([
      "bench",
      "--mock",
      "--mock-step-ms",
      "20",
      "--num-prompts",
      "40",
      "--input-len",
      "8",
      "--output-len",
      "200",
      "--max-concurrency",
      "4",
    ]);
    await run.waitFor(/Starting main benchmark run/);
    await new Promise((resolve) => setTimeout(resolve, 300)); // requests in flight (each takes 4 s)
    const r = await interrupt(run);
    expect(r.code, run.stderr).toBe(130);
    expect(r.leftRunning).toEqual([]);
    expect(run.stdout).not.toMatch(/Serving Benchmark Result/);
  });

  test("mid-generate against a standalone engine: the engine receives the abort", async () => {
    const port = await freePort();
    const engine = await startStandaloneMock([
      "--handshake-address",
      `tcp://127.0.0.1:${port}`,
      "--step-ms",
      "20",
    ]);
    try {
      const run = startCli([
        "generate",
        "--handshake-address",
        `tcp://127.0.0.1:${port}`,
        "--prompt-token-ids",
        "4,5",
        "--max-tokens",
        "100000",
        "--request-id",
        "to-abort",
      ]);
      await run.waitFor(/^\d+ \d+/);
      const r = await interrupt(run);
      expect(r.code, run.stderr).toBe(130);
      await engine.waitFor(/"event":"abort"/);
      const abort = mockEvents(engine).find((e) => e.event === "abort");
      expect(abort).toMatchObject({ requestIds: ["to-abort"], removed: ["to-abort"] });
    } finally {
      engine.child.kill("SIGINT");
      await engine.done;
    }
  });
});
