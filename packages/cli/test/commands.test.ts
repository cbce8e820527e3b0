// Every command as a real child process against `--mock` (the mock engine started by the CLI on a free port):
// output parsed (JSON where the command has it), exit code, and that nothing the CLI started is left running.
import { expectedTokens } from "@vllm-engine-core/mock-engine";
import { describe, expect, test } from "vitest";
import { errorLines, jsonLines, runCli } from "./helpers.js";

function expectClean(r: { code: number | null; leftRunning: number[]; seen: number[]; stderr: string }) {
  expect(r.code, r.stderr).toBe(0);
  expect(r.seen.length, "the mock engine ran under the CLI").toBeGreaterThan(0);
  expect(r.leftRunning).toEqual([]);
}

describe.concurrent("info", () => {
  test("--json: one object with every engine's registration", async () => {
    const r = await runCli(["info", "--mock", "--mock-engines", "2", "--json"]);
    expectClean(r);
    const [info] = jsonLines(r.stdout) as [{ engineCount: number; engines: Record<string, unknown>[] }];
    expect(info.engineCount).toBe(2);
    expect(info.engines.map((e) => e.index)).toEqual([0, 1]);
    // The mock's registration defaults (tools/mock-engine README).
    expect(info.engines[1]).toMatchObject({
      vllmVersion: "0.26.0.dev0+mock",
      dtype: "bfloat16",
      maxModelLen: 4096,
      numGpuBlocks: 8192,
      blockSize: 16,
      dataParallelRank: 1,
      tensorParallelSize: 1,
      pipelineParallelSize: 1,
      kvCacheSizeTokens: 8192 * 16,
      kvCacheMaxConcurrency: (8192 * 16) / 4096,
    });
  });

  test("table: a header and one row per engine", async () => {
    const r = await runCli(["info", "--mock", "--mock-engines", "2"]);
    expectClean(r);
    const rows = r.stdout.trim().split("\n");
    expect(rows).toHaveLength(4);
    expect(rows[0]!.split(/\s+/)).toEqual([
      "engine",
      "vllm",
      "dtype",
      "max_model_len",
      "gpu_blocks",
      "block_size",
      "dp_rank/size",
      "tp",
      "pp",
      "kv_tokens",
      "max_concurrency",
    ]);
    expect(rows[3]!.trim().split(/\s+/)).toEqual([
      "1",
      "0.26.0.dev0+mock",
      "bfloat16",
      "4096",
      "8192",
      "16",
      "1/1",
      "1",
      "1",
      "131072",
      "32.00",
    ]);
  });
});

describe.concurrent("generate", () => {
  test("--json: one line per output; the tokens are the engine's, the last line carries finish and timings", async () => {
    const prompt = [11, 22, 33];
    const r = await runCli([
      "generate",
      "--mock",
      "--prompt-token-ids",
      prompt.join(","),
      "--max-tokens",
      "6",
      "--request-id",
      "g1",
      "--json",
    ]);
    expectClean(r);
    const lines = jsonLines(r.stdout) as {
      requestId: string;
      newTokenIds: number[];
      finishReason: string | null;
      numTokens?: number;
      ttftMs?: number;
      e2eMs?: number;
    }[];
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.every((l) => l.requestId === "g1")).toBe(true);
    expect(lines.flatMap((l) => l.newTokenIds)).toEqual(expectedTokens("g1", prompt, 6));
    const last = lines.at(-1)!;
    expect(last.finishReason).toBe("length");
    expect(last.numTokens).toBe(6);
    expect(last.e2eMs!).toBeGreaterThanOrEqual(last.ttftMs!);
    expect(lines.slice(0, -1).every((l) => l.finishReason === null)).toBe(true);
  });

  test("sampling flags reach the engine: --stop-token-ids stops at that token (finish stop, stop reason)", async () => {
    const prompt = [5, 6, 7, 8];
    const tokens = expectedTokens("g-stop", prompt, 10);
    const stop = tokens[3]!;
    const cut = tokens.indexOf(stop) + 1;
    const r = await runCli([
      "generate",
      "--mock",
      "--prompt-token-ids",
      prompt.join(","),
      "--max-tokens",
      "10",
      "--stop-token-ids",
      String(stop),
      "--temperature",
      "0.5",
      "--top-p",
      "0.9",
      "--top-k",
      "20",
      "--seed",
      "7",
      "--ignore-eos",
      "--request-id",
      "g-stop",
      "--json",
    ]);
    expectClean(r);
    const lines = jsonLines(r.stdout) as {
      newTokenIds: number[];
      finishReason: string | null;
      stopReason: unknown;
    }[];
    expect(lines.flatMap((l) => l.newTokenIds)).toEqual(tokens.slice(0, cut));
    expect(lines.at(-1)).toMatchObject({ finishReason: "stop", stopReason: stop });
  });

  test("negative flag values parse as in vLLM's CLIs: --top-k -1 --seed -1 --presence-penalty -0.5", async () => {
    const prompt = [3, 4, 5];
    const r = await runCli([
      "generate",
      "--mock",
      "--prompt-token-ids",
      prompt.join(","),
      "--max-tokens",
      "4",
      "--top-k",
      "-1",
      "--seed",
      "-1",
      "--presence-penalty",
      "-0.5",
      "--request-id",
      "g-neg",
      "--json",
    ]);
    expectClean(r);
    const lines = jsonLines(r.stdout) as { newTokenIds: number[]; finishReason: string | null }[];
    expect(lines.flatMap((l) => l.newTokenIds)).toEqual(expectedTokens("g-neg", prompt, 4));
    expect(lines.at(-1)).toMatchObject({ finishReason: "length" });
  });

  test("several prompts run concurrently on two engines; --logprobs adds logprob rows", async () => {
    const r = await runCli([
      "generate",
      "--mock",
      "--mock-engines",
      "2",
      "--prompt-token-ids",
      "1,2,3",
      "--prompt-token-ids",
      "4,5",
      "--max-tokens",
      "4",
      "--logprobs",
      "2",
      "--request-id",
      "multi",
      "--json",
    ]);
    expectClean(r);
    const lines = jsonLines(r.stdout) as {
      index: number;
      requestId: string;
      engineIndex: number;
      newTokenIds: number[];
      logprobs: { tokenIds: number[]; logprobs: number[]; rank: number }[];
    }[];
    for (const index of [0, 1]) {
      const mine = lines.filter((l) => l.index === index);
      expect(mine[0]!.requestId).toBe(`multi-${index}`);
      const prompt = index === 0 ? [1, 2, 3] : [4, 5];
      expect(mine.flatMap((l) => l.newTokenIds)).toEqual(expectedTokens(`multi-${index}`, prompt, 4));
      for (const l of mine) {
        expect(l.logprobs).toHaveLength(l.newTokenIds.length);
        // Column 0 is the sampled token, then the top 2.
        l.logprobs.forEach((row, i) => {
          expect(row.tokenIds).toHaveLength(3);
          expect(row.tokenIds[0]).toBe(l.newTokenIds[i]);
        });
      }
    }
    // Least-loaded engine selection puts the two concurrent requests on different engines.
    expect(new Set(lines.map((l) => l.engineIndex))).toEqual(new Set([0, 1]));
  });

  test("text output: token ids stream on one line, then finish reason and timings", async () => {
    const prompt = [9, 9, 9];
    const r = await runCli([
      "generate",
      "--mock",
      "--prompt-token-ids",
      prompt.join(","),
      "--max-tokens",
      "5",
      "--request-id",
      "txt",
    ]);
    expectClean(r);
    const [ids, summary] = r.stdout.trim().split("\n");
    expect(ids!.split(" ").map(Number)).toEqual(expectedTokens("txt", prompt, 5));
    expect(summary).toMatch(
      /^request 0 \(txt, engine 0\): 5 tokens, finish length, TTFT [\d.]+ ms, TPOT [\d.]+ ms, total [\d.]+ ms$/,
    );
  });
});

describe.concurrent("utility", () => {
  test("any method with JSON args: one result per engine (--json)", async () => {
    const r = await runCli([
      "utility",
      "echo",
      '[1, "two", {"x": 3}]',
      "--mock",
      "--mock-engines",
      "2",
      "--json",
    ]);
    expectClean(r);
    expect(jsonLines(r.stdout)).toEqual([
      {
        method: "echo",
        args: [1, "two", { x: 3 }],
        results: [
          { engineIndex: 0, result: [1, "two", { x: 3 }] },
          { engineIndex: 1, result: [1, "two", { x: 3 }] },
        ],
      },
    ]);
  });

  test("text: one line per engine", async () => {
    const r = await runCli(["utility", "engine_index", "--mock", "--mock-engines", "2"]);
    expectClean(r);
    expect(r.stdout.trim().split("\n")).toEqual(["engine 0: 0", "engine 1: 1"]);
  });

  test("an engine's failure is one line with the engine's message, exit 1", async () => {
    const r = await runCli(["utility", "no_such_method", "--mock"]);
    expect(r.code).toBe(1);
    expect(r.leftRunning).toEqual([]);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("UTILITY_CALL_FAILED");
    expect(lines[0]).toContain("'EngineCoreProc' object has no attribute 'no_such_method'");
  });

  test.each([
    [["is-sleeping"], false],
    [["is-paused"], false],
    [["reset-prefix-cache"], true],
    [["sleep", "--level", "1"], null],
    [["wake-up"], null],
    [["pause", "--mode", "keep"], null],
    [["resume"], null],
    [["profile", "start"], null],
    [["profile", "stop", "--profile-prefix", "p"], null],
  ])("shortcut %j --json", async (command, result) => {
    const r = await runCli([...command, "--mock", "--json"]);
    expectClean(r);
    expect(jsonLines(r.stdout)).toEqual([{ command: command[0], engineCount: 1, result }]);
  });
});
