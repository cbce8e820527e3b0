// `metrics` in a child process: it stays connected to a mock engine that logs stats and serves vLLM's metric
// names on /metrics and the engines' health on /health, until Ctrl-C (exit 130, the mock engine gone).
import { describe, expect, test } from "vitest";
import { leftovers, startCli } from "./helpers.js";

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
