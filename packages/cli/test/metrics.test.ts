// `metrics` in a child process: it stays connected to a mock engine that logs stats and serves vLLM's metric
// names on /metrics and the engines' health on /health, until Ctrl-C (exit 130, the mock engine gone).

import { startMockEngine } from "@vllm-engine-core/mock-engine";
import { describe, expect, test } from "vitest";
import { freePort, leftovers, runCli, startCli } from "./helpers.js";

const LISTENING = /metrics of 1 engine\(s\) on (http:\/\/127\.0\.0\.1:\d+)\/metrics, health on/;

describe("metrics", () => {
  test("--mock --port 0: /metrics has vLLM's metrics per engine, /health is 200, Ctrl-C exits 130", async () => {
    const run = startCli(["metrics", "--mock", "--port", "0", "--served-model-name", "m1"]);
    try {
      await run.waitFor(LISTENING);
      const origin = LISTENING.exec(run.stderr)![1]!;
      const scrape = await fetch(`${origin}/metrics`);
      expect(scrape.status).toBe(200);
      expect(scrape.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await scrape.text();
      expect(text).toContain("# TYPE vllm:num_requests_running gauge");
      expect(text).toContain("# TYPE vllm:kv_cache_usage_perc gauge");
      expect(text).toContain("# TYPE vllm:prompt_tokens_total counter");
      expect(text).toContain("# TYPE vllm:time_to_first_token_seconds histogram");
      expect(text).toMatch(/^vllm:num_requests_running\{model_name="m1",engine="0"\} 0$/m);
      expect(text).toMatch(/^vllm:prompt_tokens_total\{model_name="m1",engine="0"\} 0$/m);

      const health = await fetch(`${origin}/health`);
      expect(health.status).toBe(200);
      expect((await fetch(`${origin}/nope`)).status).toBe(404);
      expect((await fetch(`${origin}/metrics`, { method: "POST" })).status).toBe(405);
    } finally {
      run.child.kill("SIGINT");
    }
    const { code } = await run.done;
    expect(code, run.stderr).toBe(130);
    expect((await leftovers(run)).leftRunning).toEqual([]);
  });

  // vLLM's model_name label is served_model_name, which defaults to the model argument; the engines do not
  // report their model (EngineCoreReadyResponse has no model field), so it comes from --model.
  test("engines reached by address: model_name is --model (vLLM's served_model_name default)", async () => {
    const port = await freePort();
    const handshakeAddress = `tcp://127.0.0.1:${port}`;
    const run = startCli([
      "metrics",
      "--handshake-address",
      handshakeAddress,
      "--model",
      "Qwen/Qwen3-0.6B",
      "--port",
      "0",
      "--ready-timeout-s",
      "30",
    ]);
    const engine = await startMockEngine({ handshakeAddress, engineIndices: [0], logStats: true });
    try {
      await run.waitFor(LISTENING);
      const origin = LISTENING.exec(run.stderr)![1]!;
      const text = await (await fetch(`${origin}/metrics`)).text();
      expect(text).toMatch(/^vllm:num_requests_running\{model_name="Qwen\/Qwen3-0\.6B",engine="0"\} 0$/m);
      expect(text).not.toContain('model_name=""');
    } finally {
      run.child.kill("SIGINT");
      await run.done;
      await engine.stop();
    }
  });

  test("engines reached by address without --model or --served-model-name: a usage error, exit 2", async () => {
    const r = await runCli([
      "metrics",
      "--handshake-address",
      `tcp://127.0.0.1:${await freePort()}`,
      "--ready-timeout-s",
      "1",
    ]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/`metrics` needs --model NAME .* or --served-model-name NAME/);
  });

  test("--mock alone: model_name is the mock's, never empty", async () => {
    const run = startCli(["metrics", "--mock", "--port", "0"]);
    try {
      await run.waitFor(LISTENING);
      const origin = LISTENING.exec(run.stderr)![1]!;
      const text = await (await fetch(`${origin}/metrics`)).text();
      expect(text).toMatch(/^vllm:num_requests_running\{model_name="mock",engine="0"\} 0$/m);
    } finally {
      run.child.kill("SIGINT");
    }
    await run.done;
  });

  test("a port that is taken: one line naming the address and the fix, exit 1", async () => {
    const first = startCli(["metrics", "--mock", "--port", "0"]);
    try {
      await first.waitFor(LISTENING);
      const port = new URL(LISTENING.exec(first.stderr)![1]!).port;
      const second = startCli(["metrics", "--mock", "--port", port]);
      const { code } = await second.done;
      expect(code).toBe(1);
      expect(second.stderr).toContain(
        `cannot listen on 127.0.0.1:${port} (EADDRINUSE); pick another --port or --host`,
      );
      expect((await leftovers(second)).leftRunning).toEqual([]);
    } finally {
      first.child.kill("SIGINT");
      await first.done;
    }
  });
});
