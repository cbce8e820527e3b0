// `vllm-engine-core mock-engine` as a standalone engine process (like `vllm serve --headless`), and the other
// commands against it from a second process — handshake-owner with vLLM's spellings and bootstrapped — with the
// engine's own event log (--json) showing what each command sent.
import { describe, expect, test } from "vitest";
import {
  type CliRun,
  freePort,
  jsonLines,
  leftovers,
  mockEvents,
  runCli,
  startStandaloneMock,
} from "./helpers.js";

/** Ctrl-C the standalone engine: exit 130 and nothing left running. */
async function stopStandalone(engine: CliRun): Promise<void> {
  engine.child.kill("SIGINT");
  const { code } = await engine.done;
  expect(code, engine.stderr).toBe(130);
  expect((await leftovers(engine)).leftRunning).toEqual([]);
}

describe.concurrent("mock-engine standalone", () => {
  test("info with vLLM's flag spellings against two engines that dial the handshake address", async () => {
    const port = await freePort();
    const engine = await startStandaloneMock([
      "--handshake-address",
      `tcp://127.0.0.1:${port}`,
      "--engine-count",
      "2",
    ]);
    try {
      const r = await runCli([
        "info",
        "--data-parallel-address",
        "127.0.0.1",
        "--data-parallel-rpc-port",
        String(port),
        "--data-parallel-size",
        "2",
        "--json",
      ]);
      expect(r.code, r.stderr).toBe(0);
      const [info] = jsonLines(r.stdout) as [{ engines: { index: number; dataParallelRank: number }[] }];
      expect(info.engines.map((e) => [e.index, e.dataParallelRank])).toEqual([
        [0, 0],
        [1, 1],
      ]);
      await engine.waitFor(/"event":"ready","engineIndex":1|"engineIndex":1[^\n]*"event":"ready"/);
      const ready = mockEvents(engine).filter((e) => e.event === "ready");
      expect(ready.map((e) => e.engineIndex).sort()).toEqual([0, 1]);
    } finally {
      await stopStandalone(engine);
    }
  });

  test.each([
    [["sleep", "--level", "2", "--mode", "wait"], "sleep", [2, "wait"]],
    [["wake-up", "--tags", "weights,kv_cache"], "wake_up", [["weights", "kv_cache"]]],
    [["reset-prefix-cache", "--reset-running-requests"], "reset_prefix_cache", [true, false]],
    [["pause", "--mode", "wait", "--no-clear-cache"], "pause_scheduler", ["wait", false]],
    [["profile", "start", "--profile-prefix", "trace"], "profile", [true, "trace"]],
    [["utility", "collective_rpc", '["echo", null, [7], {}]'], "collective_rpc", ["echo", null, [7], {}]],
  ])("%j sends %s %j to the engine", async (command, method, args) => {
    const port = await freePort();
    const engine = await startStandaloneMock(["--handshake-address", `tcp://127.0.0.1:${port}`]);
    try {
      const r = await runCli([...command, "--handshake-address", `tcp://127.0.0.1:${port}`]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.leftRunning).toEqual([]);
      await engine.waitFor(/"event":"utility"/);
      const calls = mockEvents(engine).filter((e) => e.event === "utility");
      expect(calls.map((e) => [e.method, e.args])).toEqual([[method, args]]);
    } finally {
      await stopStandalone(engine);
    }
  });

  test("bootstrapped: generate against an engine that registers on the given input/output addresses", async () => {
    const [input, output] = [`tcp://127.0.0.1:${await freePort()}`, `tcp://127.0.0.1:${await freePort()}`];
    const engine = await startStandaloneMock(["--input-address", input, "--output-address", output]);
    try {
      const r = await runCli([
        "generate",
        "--input-address",
        input,
        "--output-address",
        output,
        "--prompt-token-ids",
        "1,2",
        "--max-tokens",
        "3",
        "--json",
      ]);
      expect(r.code, r.stderr).toBe(0);
      const lines = jsonLines(r.stdout) as { newTokenIds: number[]; finishReason: string | null }[];
      expect(lines.flatMap((l) => l.newTokenIds)).toHaveLength(3);
      expect(lines.at(-1)!.finishReason).toBe("length");
      await engine.waitFor(/"event":"finished"/);
    } finally {
      await stopStandalone(engine);
    }
  });

  test("text mode describes what the engine does", async () => {
    const port = await freePort();
    const engine = startStandaloneText(port);
    await engine.waitFor(/dialing handshake tcp:\/\/127\.0\.0\.1:\d+; Ctrl-C to stop/);
    try {
      const r = await runCli([
        "generate",
        "--handshake-address",
        `tcp://127.0.0.1:${port}`,
        "--prompt-token-ids",
        "3",
      ]);
      expect(r.code, r.stderr).toBe(0);
      await engine.waitFor(/engine 0: request \S+ finished \(1, 16 tokens\)/);
      expect(engine.stdout).toMatch(/engine 0: READY, serving/);
      expect(engine.stdout).toMatch(/engine 0: request \S+ \(1 prompt tokens, max_tokens 16\)/);
    } finally {
      await stopStandalone(engine);
    }
  });
});

function startStandaloneText(port: number): CliRun {
  // Without --json: human-readable lines.
  return startCliText(["mock-engine", "--handshake-address", `tcp://127.0.0.1:${port}`]);
}

import { startCli as startCliText } from "./helpers.js";
