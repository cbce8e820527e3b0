// `vllm-engine-core serve --mock` as a user runs it: the built CLI in a child process, listening on the port
// it prints (--port 0), answering a completion and a streamed chat over real HTTP, and stopping on SIGINT
// or SIGTERM with exit 130 (README: "130 interrupted: Ctrl-C (or SIGTERM)") — with the mock engine gone
// (checked by its pid) even while a stream is open.
import { describe, expect, test } from "vitest";
import { type CliRun, isAlive, leftovers, startCli } from "./helpers.js";

interface Completion {
  choices: { text: string; finish_reason: string | null }[];
  usage: Record<string, number>;
}
interface ChatChunk {
  choices: { delta?: { role?: string; content?: string }; finish_reason?: string | null }[];
  usage?: Record<string, number>;
}

interface Served {
  run: CliRun;
  base: string;
  enginePid: number;
}

async function serve(extra: string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const run = startCli(["serve", "--mock", "--port", "0", ...extra], { env });
  await run.waitFor(/serving "qwen3-mock" on http:\/\/127\.0\.0\.1:\d+ /, 40_000);
  const port = Number(/on http:\/\/127\.0\.0\.1:(\d+) /.exec(run.stderr + run.stdout)![1]);
  expect(port).toBeGreaterThan(0);
  const engines = [...run.seen].filter(isAlive);
  expect(engines.length, "the mock engine runs below the CLI").toBeGreaterThan(0);
  return { run, base: `http://127.0.0.1:${port}`, enginePid: engines[0]! };
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** Reads SSE `data:` payloads until [DONE] (or the end of the body). */
async function sseEvents(
  res: Response,
  onEvent?: (n: number) => void,
): Promise<{ events: string[]; done: boolean }> {
  const events: string[] = [];
  let pending = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    let end = pending.indexOf("\n\n");
    while (end !== -1) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 2);
      if (line.startsWith("data: ")) {
        const data = line.slice(6);
        if (data === "[DONE]") return { events, done: true };
        events.push(data);
        onEvent?.(events.length);
      }
      end = pending.indexOf("\n\n");
    }
  }
  return { events, done: false };
}

async function stop(s: Served, signal: NodeJS.Signals) {
  s.run.child.kill(signal);
  const { code } = await s.run.done;
  const left = await leftovers(s.run);
  return { code, ...left };
}

describe.concurrent("serve --mock in a child process", () => {
  test("prints its URL, answers a completion and a streamed chat; SIGINT → exit 130, mock engine gone", async () => {
    const s = await serve();
    try {
      const res = await post(`${s.base}/v1/completions`, {
        model: "qwen3-mock",
        prompt: "Hello world",
        max_tokens: 5,
      });
      expect(res.status).toBe(200);
      const completion = (await res.json()) as Completion;
      // The mock engine echoes the prompt's tokens ("Hello", " world"), cycling.
      expect(completion.choices[0]!).toMatchObject({
        text: "Hello worldHello worldHello",
        finish_reason: "length",
      });
      expect(completion.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });

      const chat = await post(`${s.base}/v1/chat/completions`, {
        model: "qwen3-mock",
        messages: [{ role: "user", content: "Hello!" }],
        stream: true,
        stream_options: { include_usage: true },
      });
      expect(chat.status).toBe(200);
      expect(chat.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const { events, done } = await sseEvents(chat);
      expect(done).toBe(true);
      const chunks = events.map((e) => JSON.parse(e) as ChatChunk);
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
      const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("");
      // The echoed chat prompt without its special tokens, up to <|im_end|> (Qwen3's EOS).
      expect(text).toBe("user\nHello!");
      expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("stop");
      // <|im_start|> user \n Hello ! <|im_end|>: six tokens, the special ones not shown.
      expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 6 });
    } finally {
      const r = await stop(s, "SIGINT");
      expect(r.code, s.run.stderr).toBe(130);
      expect(s.run.stderr).toMatch(/interrupted by SIGINT; everything this command started was closed/);
      expect(isAlive(s.enginePid), `mock engine pid ${s.enginePid}`).toBe(false);
      expect(r.leftRunning).toEqual([]);
    }
  });

  test("vLLM's HTTP flags: --api-key (several, over $VLLM_API_KEY), --lora-modules, X-Request-Id, CORS", async () => {
    const s = await serve(
      [
        "--api-key",
        "k1",
        "k2",
        "--lora-modules",
        "sql=/loras/sql",
        '{"name": "chat", "path": "/loras/chat"}',
        "--enable-request-id-headers",
        "--allowed-origins",
        '["https://ui.example"]',
      ],
      { VLLM_API_KEY: "env-key" },
    );
    try {
      const models = (authorization?: string) =>
        fetch(`${s.base}/v1/models`, {
          headers: {
            origin: "https://ui.example",
            "x-request-id": "r1",
            ...(authorization ? { authorization } : {}),
          },
        });
      const denied = await models();
      expect([denied.status, await denied.json()]).toEqual([401, { error: "Unauthorized" }]);
      expect((await models("Bearer env-key")).status).toBe(401);
      const ok = await models("Bearer k2");
      expect(ok.status).toBe(200);
      expect(ok.headers.get("x-request-id")).toBe("r1");
      expect(ok.headers.get("access-control-allow-origin")).toBe("https://ui.example");
      const list = (await ok.json()) as { data: { id: string; parent: string | null }[] };
      expect(list.data.map((m) => [m.id, m.parent])).toEqual([
        ["qwen3-mock", null],
        ["sql", "qwen3-mock"],
        ["chat", "qwen3-mock"],
      ]);
      const completion = await fetch(`${s.base}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer k1" },
        body: JSON.stringify({ model: "chat", prompt: "Hello", max_tokens: 2 }),
      });
      expect(((await completion.json()) as { model: string }).model).toBe("chat");
      expect((await fetch(`${s.base}/health`)).status).toBe(200);
    } finally {
      const r = await stop(s, "SIGINT");
      expect(r.code, s.run.stderr).toBe(130);
    }
  });

  test("--enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser qwen3: a scripted call comes back parsed", async () => {
    const s = await serve([
      "--enable-auto-tool-choice",
      "--tool-call-parser",
      "hermes",
      "--reasoning-parser",
      "qwen3",
    ]);
    try {
      // Qwen3 token ids of `<think>\nok\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>`,
      // from /tokenize, then <|im_end|> (the EOS), generated by the mock engine as scripted.
      const tokens = (await (
        await post(`${s.base}/tokenize`, {
          prompt:
            '<think>\nok\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call><|im_end|>',
          add_special_tokens: false,
        })
      ).json()) as { tokens: number[] };
      const res = await post(`${s.base}/v1/chat/completions`, {
        model: "qwen3-mock",
        messages: [{ role: "user", content: "Call f." }],
        tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
        vllm_xargs: { scripted_token_ids: tokens.tokens },
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        choices: { message: Record<string, unknown>; finish_reason: string }[];
      };
      expect(body.choices[0]!.finish_reason).toBe("tool_calls");
      expect(body.choices[0]!.message).toMatchObject({
        content: null,
        reasoning: "\nok\n",
        tool_calls: [{ type: "function", function: { name: "f", arguments: '{"x": 1}' } }],
      });
    } finally {
      const r = await stop(s, "SIGINT");
      expect(r.code, s.run.stderr).toBe(130);
    }
  });

  test("structured outputs reach the engine with a backend (--structured-outputs-config.backend, default auto)", async () => {
    for (const extra of [[], ["--structured-outputs-config.backend", "guidance"]]) {
      const s = await serve(extra);
      try {
        // The mock engine, like vLLM's, finishes a structured-outputs request without `_backend` with ERROR.
        const res = await post(`${s.base}/v1/chat/completions`, {
          model: "qwen3-mock",
          messages: [{ role: "user", content: "Hello!" }],
          max_tokens: 3,
          response_format: { type: "json_object" },
        });
        expect(res.status, extra.join(" ")).toBe(200);
        const body = (await res.json()) as { choices: { finish_reason: string }[] };
        expect(body.choices[0]!.finish_reason).toBe("length");
      } finally {
        expect((await stop(s, "SIGINT")).code).toBe(130);
      }
    }
    const bad = startCli([
      "serve",
      "--mock",
      "--port",
      "0",
      "--structured-outputs-config.backend",
      "llguidance",
    ]);
    const { code } = await bad.done;
    expect(code).toBe(2);
    expect(bad.stderr).toMatch(
      /--structured-outputs-config\.backend must be one of auto, xgrammar, guidance, outlines, lm-format-enforcer, got "llguidance"/,
    );
  });

  test("--renderer-num-workers: not a positive integer is a usage error; 2 serves", async () => {
    const bad = startCli(["serve", "--mock", "--port", "0", "--renderer-num-workers", "0"]);
    const { code } = await bad.done;
    expect(code).toBe(2);
    expect(bad.stderr).toMatch(/--renderer-num-workers/);
    const s = await serve(["--renderer-num-workers", "2"]);
    try {
      const res = await post(`${s.base}/v1/completions`, {
        model: "qwen3-mock",
        prompt: "Hello",
        max_tokens: 2,
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Completion).usage.completion_tokens).toBe(2);
    } finally {
      await stop(s, "SIGINT");
    }
  });

  test("--enable-auto-tool-choice without --tool-call-parser: usage error, vLLM's wording", async () => {
    const run = startCli(["serve", "--mock", "--port", "0", "--enable-auto-tool-choice"]);
    const { code } = await run.done;
    expect(code).toBe(2);
    expect(run.stderr).toContain("--enable-auto-tool-choice requires --tool-call-parser");
  });

  test.each(["SIGINT", "SIGTERM"] as const)(
    "%s while a chat streams: the stream ends, exit 130, mock engine gone",
    async (signal) => {
      const s = await serve(["--mock-step-ms", "20"]);
      const chat = await post(`${s.base}/v1/chat/completions`, {
        model: "qwen3-mock",
        messages: [{ role: "user", content: "Hello!" }],
        stream: true,
        max_tokens: 4000,
        ignore_eos: true,
      });
      expect(chat.status).toBe(200);
      let flowing: () => void = () => {};
      const started = new Promise<void>((resolve) => {
        flowing = resolve;
      });
      const reading = sseEvents(chat, (n) => n === 3 && flowing()).catch((error: Error) => ({ error }));
      await started;
      const r = await stop(s, signal);
      expect(r.code, s.run.stderr).toBe(130);
      expect(s.run.stderr).toMatch(
        new RegExp(`interrupted by ${signal}; everything this command started was closed`),
      );
      expect(isAlive(s.enginePid), `mock engine pid ${s.enginePid}`).toBe(false);
      expect(r.leftRunning).toEqual([]);
      // The open stream was cut (no [DONE]: the request did not finish), not left hanging.
      const outcome = await reading;
      expect("error" in outcome || outcome.done === false).toBe(true);
    },
  );
});
