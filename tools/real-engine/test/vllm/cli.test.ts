// The `vllm-engine-core` CLI (packages/cli, run from its built dist/ as a child process, as a user runs it)
// against vLLM's real engine core. A headless engine handshakes once and each CLI command is one frontend, so
// every command gets its own engine; the three start in parallel.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  modelDirs,
  type RealEngine,
  type RealEngineOptions,
  startRealEngine,
} from "../../src/index.ts";
import { kit, title } from "./tier.ts";

const CLI_BIN = fileURLToPath(new URL("../../../../packages/cli/dist/bin.js", import.meta.url));
if (kit && !existsSync(CLI_BIN)) {
  throw new Error(`${CLI_BIN} is missing: build first (npm run test:vllm builds; or turbo run build)`);
}

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI to its exit (bounded: a hung command is killed and fails the test). */
function runCli(args: readonly string[], timeoutMs = 240_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`vllm-engine-core ${args.join(" ")} did not exit in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The model-free executor's deterministic ids (tools/vllm-executor README, "Which token"): FNV-1a of the prompt. */
function deterministicIds(promptTokenIds: readonly number[], n: number): number[] {
  let h = 2166136261;
  for (const t of promptTokenIds) h = Number((BigInt((h ^ t) >>> 0) * 16777619n) & 0xffffffffn);
  const seed = h & 0x7fffffff;
  return Array.from({ length: n }, (_, k) => 1000 + ((seed * 31 + k * 7919) % 50000));
}

type Command = "info" | "generate" | "bench";
const engineOptions: Record<Command, Omit<RealEngineOptions, "kit" | "port">> = {
  // Qwen3-MoE: coordinated ranks report data_parallel_size 2 (dense ranks are independent engines and report
  // 1 each: vLLM resets it in `EngineCoreProc.run_engine_core`, as the mock engine does).
  info: { maxModelLen: 1024, dataParallelSize: 2, modelDir: modelDirs.moe },
  generate: { maxModelLen: 1024 },
  bench: { maxModelLen: 1024, executor: { stepMs: 5 } },
};

describe.skipIf(!kit)(title("the vllm-engine-core CLI against the real engine"), () => {
  const engines = new Map<Command, RealEngine>();
  const outDir = mkdtempSync(join(tmpdir(), "real-engine-cli-"));
  beforeAll(async () => {
    if (!kit) return;
    for (const command of Object.keys(engineOptions) as Command[]) {
      engines.set(command, startRealEngine({ kit, port: await freePort(), ...engineOptions[command] }));
    }
  });
  afterAll(async () => {
    await Promise.all([...engines.values()].map((e) => e.stop()));
    rmSync(outDir, { recursive: true, force: true });
  });
  const address = (command: Command) => {
    const engine = engines.get(command);
    if (!engine) throw new Error(`no engine for ${command}`);
    return ["--handshake-address", engine.handshakeAddress, "--ready-timeout-s", "240"];
  };
  /** The version vLLM logs at start-up ("Initializing a V1 LLM engine (v0.23.1rc1.dev…) with config"). */
  const loggedVersion = async (command: Command) => {
    const line = await engines.get(command)!.waitForLog(/Initializing a V1 LLM engine \(v\S+\)/, 60_000);
    return /Initializing a V1 LLM engine \(v(\S+)\)/.exec(line)![1];
  };

  it("info --json: both MoE DP ranks' registrations (with the CLI's DP coordinator), as vLLM reports them", async () => {
    const result = await runCli([
      "info",
      ...address("info"),
      "--data-parallel-size",
      "2",
      "--coordinator",
      "--json",
    ]);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const info = JSON.parse(result.stdout);
    const version = await loggedVersion("info");
    expect(info.engineCount).toBe(2);
    expect(info.engines).toHaveLength(2);
    info.engines.forEach((e: Record<string, unknown>, rank: number) => {
      expect(e).toMatchObject({
        index: rank,
        vllmVersion: version,
        maxModelLen: 1024,
        blockSize: 16,
        dataParallelSize: 2,
        dataParallelRank: rank,
        tensorParallelSize: 1,
        pipelineParallelSize: 1,
        // The executor reports 64 MiB of KV memory: 65,536 tokens of the tiny model, 4096 blocks of 16,
        // 64 requests of max_model_len 1024 — vLLM's own log says the same.
        kvCacheSizeTokens: 65536,
        numGpuBlocks: 4096,
        kvCacheMaxConcurrency: 64,
      });
    });
    await engines.get("info")!.waitForLog(/GPU KV cache size: 65,536 tokens/, 10_000);
    await engines
      .get("info")!
      .waitForLog(/Maximum concurrency for 1,024 tokens per request: 64\.00x/, 10_000);
  });

  it("generate --json with --top-k -1: the executor's deterministic ids for each prompt, finish length", async () => {
    const prompts = [
      [1, 2, 3],
      [9, 8, 7, 6],
    ];
    const result = await runCli([
      "generate",
      ...address("generate"),
      ...prompts.flatMap((p) => ["--prompt-token-ids", p.join(",")]),
      "--max-tokens",
      "6",
      "--top-k",
      "-1",
      "--request-id",
      "cli-gen",
      "--json",
    ]);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    prompts.forEach((prompt, i) => {
      const mine = lines.filter((l) => l.index === i);
      expect(mine.every((l) => l.requestId === `cli-gen-${i}` && l.engineIndex === 0)).toBe(true);
      expect(mine.flatMap((l) => l.newTokenIds)).toEqual(deterministicIds(prompt, 6));
      const last = mine[mine.length - 1];
      expect(last).toMatchObject({ finishReason: "length", numTokens: 6 });
      expect(last.ttftMs).toBeGreaterThan(0);
      expect(last.e2eMs).toBeGreaterThanOrEqual(last.ttftMs);
    });
  });

  it("bench: 20 prompts, all successful, with sane figures", async () => {
    const jsonFile = join(outDir, "bench.json");
    const result = await runCli([
      "bench",
      ...address("bench"),
      "--num-prompts",
      "20",
      "--input-len",
      "16",
      "--output-len",
      "8",
      "--vocab-size",
      "151936",
      "--seed",
      "1",
      "--no-progress",
      "--json",
      jsonFile,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Successful requests:\s+20\n/);
    expect(result.stdout).toMatch(/Failed requests:\s+0\n/);
    const r = JSON.parse(readFileSync(jsonFile, "utf8"));
    expect(r).toMatchObject({
      completed: 20,
      failed: 0,
      total_input_tokens: 320,
      total_output_tokens: 160,
      engine_count: 1,
      vllm_version: await loggedVersion("bench"),
      max_model_len: 1024,
    });
    expect(r.output_lens).toEqual(Array(20).fill(8));
    expect(r.duration).toBeGreaterThan(0);
    expect(r.request_throughput).toBeCloseTo(20 / r.duration, 6);
    // 8 tokens at >= 5 ms a step: TTFT > 0, each request's E2EL covers its TTFT plus 7 steps. The first
    // token's delivery can come late by a fraction of a step (the client's clock, not the engine's), which
    // shortens the 7 gaps after it: 10 % of slack (a CI run measured a mean TPOT of 4.93 ms).
    expect(r.mean_ttft_ms).toBeGreaterThan(0);
    expect(r.mean_tpot_ms).toBeGreaterThanOrEqual(5 * 0.9);
    expect(r.mean_e2el_ms).toBeGreaterThanOrEqual(r.mean_ttft_ms + 7 * 5 * 0.9);
    expect(r.mean_e2el_ms).toBeLessThanOrEqual(r.duration * 1000);
    expect(r.max_concurrent_requests).toBeGreaterThan(1);
  });
});
