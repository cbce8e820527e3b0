// GET /metrics: vLLM's frontend metrics for the served model, scraped after known completions
// against the mock engine (child process, logging stats as vLLM does by default).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODEL, type Stack, startStack } from "./helpers.js";

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ logStats: true });
});
afterAll(async () => {
  await stack?.close();
});

function sample(text: string, name: string, labels: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  if (line === undefined) throw new Error(`no ${name}{${labels}} in the exposition`);
  return Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("GET /metrics", () => {
  it("serves vLLM's metrics in the Prometheus text format, following the served requests", async () => {
    let completionTokens = 0;
    let promptTokens = 0;
    for (const max_tokens of [3, 5]) {
      const res = await fetch(`${stack.baseUrl}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, prompt: "one two three four five six seven", max_tokens }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { usage: { completion_tokens: number; prompt_tokens: number } };
      completionTokens += body.usage.completion_tokens;
      promptTokens += body.usage.prompt_tokens;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    const res = await fetch(`${stack.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const labels = `model_name="${MODEL}",engine="0"`;
    expect(text).toContain("# TYPE vllm:generation_tokens_total counter");
    expect(text).toContain("# TYPE vllm:time_to_first_token_seconds histogram");
    expect(sample(text, "vllm:generation_tokens_total", labels)).toBe(completionTokens);
    expect(sample(text, "vllm:prompt_tokens_total", labels)).toBe(promptTokens);
    expect(sample(text, "vllm:request_success_total", `${labels},finished_reason="length"`)).toBe(2);
    expect(sample(text, "vllm:e2e_request_latency_seconds_count", labels)).toBe(2);
    expect(sample(text, "vllm:num_requests_running", labels)).toBe(0);
  });

  it("a stop-string finish counts once as stop (vLLM's output processor), the engine abort after it not at all", async () => {
    const scrape = async () => (await fetch(`${stack.baseUrl}/metrics`)).text();
    const labels = `model_name="${MODEL}",engine="0"`;
    const count = (text: string, reason: string) =>
      sample(text, "vllm:request_success_total", `${labels},finished_reason="${reason}"`);
    const before = await scrape();
    const res = await fetch(`${stack.baseUrl}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: MODEL,
        prompt: "one two three four five",
        max_tokens: 50,
        stop: [" three"],
      }),
    });
    const body = (await res.json()) as { choices: { text: string; finish_reason: string }[] };
    expect(body.choices[0]).toMatchObject({ text: "one two", finish_reason: "stop" });
    // The engine's abort of the request arrives after the answer: wait for it before scraping.
    await stack.engine.waitForEvent((e) => e.event === "abort");
    await new Promise((resolve) => setTimeout(resolve, 50));
    const after = await scrape();
    expect(count(after, "stop") - count(before, "stop")).toBe(1);
    expect(count(after, "abort") - count(before, "abort")).toBe(0);
    const e2e = (text: string) => sample(text, "vllm:e2e_request_latency_seconds_count", labels);
    expect(e2e(after) - e2e(before)).toBe(1);
  });
});
