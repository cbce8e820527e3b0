// Request bodies and what reaches the engine, against the mock engine in a child process (real client,
// noting each request): pydantic's lax conversions, vLLM's validation 400 word for word (the expected
// messages are vLLM's own answers to the same bodies, probed with FastAPI's TestClient over vLLM's request
// models and `validation_exception_handler`), request ids from X-Request-Id / `request_id`, `priority`,
// LoRA adapters by model name, and `--return-tokens-as-token-ids`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODEL, qwen3, type Stack, startStack } from "./helpers.js";

const tok = qwen3();

async function post(stack: Stack, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: text.startsWith("{") ? JSON.parse(text) : undefined,
  };
}

const vllm400 = (message: string, param: string) => ({
  error: { message, type: "Bad Request", param, code: 400 },
});

describe("request bodies, ids, priority, LoRA, token ids (mock engine)", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack(
      {},
      {
        noting: true,
        enableRequestIdHeaders: true,
        loraModules: [{ name: "sql-lora", path: "/loras/sql" }],
      },
    );
  });
  afterAll(async () => {
    await stack?.close();
  });
  const last = () => stack.sent.at(-1)!;

  it("strings and numbers converted as pydantic's lax mode does, then used", async () => {
    const r = await post(stack, "/v1/completions", {
      prompt: "hello there",
      max_tokens: "3",
      temperature: "0",
      ignore_eos: "on",
      stream: "false",
      seed: "7.0",
    });
    expect(r.status).toBe(200);
    expect(r.body.usage.completion_tokens).toBe(3);
    expect(last().samplingParams).toMatchObject({ maxTokens: 3, temperature: 0, ignoreEos: true, seed: 7 });
  });

  it("vLLM's 400 for what pydantic refuses, message and param as vLLM writes them", async () => {
    const cases: [unknown, ReturnType<typeof vllm400>][] = [
      [
        { prompt: "hi", temperature: "abc" },
        vllm400(
          "1 validation error:\n  {'type': 'float_parsing', 'loc': ('body', 'temperature'), 'msg': 'Input should be a valid number, unable to parse string as a number', 'input': 'abc'}",
          "body.temperature",
        ),
      ],
      [
        { prompt: "hi", max_tokens: 1.5, stream: 2 },
        vllm400(
          "2 validation errors:\n  {'type': 'int_from_float', 'loc': ('body', 'max_tokens'), 'msg': 'Input should be a valid integer, got a number with a fractional part', 'input': 1.5}\n  {'type': 'bool_parsing', 'loc': ('body', 'stream'), 'msg': 'Input should be a valid boolean, unable to interpret input', 'input': 2}",
          "body.max_tokens",
        ),
      ],
      [
        { prompt: "hi", stop: 5 },
        vllm400(
          "2 validation errors:\n  {'type': 'string_type', 'loc': ('body', 'stop', 'str'), 'msg': 'Input should be a valid string', 'input': 5}\n  {'type': 'list_type', 'loc': ('body', 'stop', 'list[str]'), 'msg': 'Input should be a valid list', 'input': 5}",
          "body.stop",
        ),
      ],
      [
        { prompt: "hi", stream: true, stream_options: "x" },
        vllm400(
          "1 validation error:\n  {'type': 'model_attributes_type', 'loc': ('body', 'stream_options'), 'msg': 'Input should be a valid dictionary or object to extract fields from', 'input': 'x'}",
          "body.stream_options",
        ),
      ],
      [
        { prompt: "hi", stream: true, stream_options: { include_usage: "maybe" } },
        vllm400(
          "1 validation error:\n  {'type': 'bool_parsing', 'loc': ('body', 'stream_options', 'include_usage'), 'msg': 'Input should be a valid boolean, unable to interpret input', 'input': 'maybe'}",
          "body.stream_options.include_usage",
        ),
      ],
      [
        { prompt: "hi", stop_token_ids: [1, "x", 2.5] },
        vllm400(
          "2 validation errors:\n  {'type': 'int_parsing', 'loc': ('body', 'stop_token_ids', 1), 'msg': 'Input should be a valid integer, unable to parse string as an integer', 'input': 'x'}\n  {'type': 'int_from_float', 'loc': ('body', 'stop_token_ids', 2), 'msg': 'Input should be a valid integer, got a number with a fractional part', 'input': 2.5}",
          "body.stop_token_ids.1",
        ),
      ],
      [
        { prompt: "hi", include_stop_str_in_output: null },
        vllm400(
          "1 validation error:\n  {'type': 'bool_type', 'loc': ('body', 'include_stop_str_in_output'), 'msg': 'Input should be a valid boolean', 'input': None}",
          "body.include_stop_str_in_output",
        ),
      ],
      [
        { prompt: "hi", n: null },
        vllm400(
          "1 validation error:\n  {'type': 'int_type', 'loc': ('body', 'n'), 'msg': 'Input should be a valid integer', 'input': None}",
          "body.n",
        ),
      ],
      [
        { prompt: "hi", logit_bias: [1] },
        vllm400(
          "1 validation error:\n  {'type': 'dict_type', 'loc': ('body', 'logit_bias'), 'msg': 'Input should be a valid dictionary', 'input': [1]}",
          "body.logit_bias",
        ),
      ],
      [
        { prompt: "hi", request_id: 5 },
        vllm400(
          "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'request_id'), 'msg': 'Input should be a valid string', 'input': 5}",
          "body.request_id",
        ),
      ],
    ];
    for (const [body, expected] of cases) {
      const r = await post(stack, "/v1/completions", body);
      expect([r.status, r.body]).toEqual([400, expected]);
    }
    const chat = await post(stack, "/v1/chat/completions", {});
    expect(chat.body).toEqual(
      vllm400(
        "1 validation error:\n  {'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field required', 'input': {}}",
        "body.messages",
      ),
    );
    const list = await post(stack, "/v1/chat/completions", { messages: "x" });
    expect(list.body.error.param).toBe("body.messages");
  });

  it("unknown fields are accepted and ignored (vLLM's extra='allow')", async () => {
    const r = await post(stack, "/v1/completions", { prompt: "hi", max_tokens: 2, not_a_field: { x: 1 } });
    expect(r.status).toBe(200);
  });

  it("X-Request-Id is the id's base: the response id, the header echoed, the engine's id suffixed", async () => {
    const r = await post(
      stack,
      "/v1/completions",
      { prompt: "hi", max_tokens: 2 },
      { "x-request-id": "trace-42" },
    );
    expect(r.body.id).toBe("cmpl-trace-42");
    expect(r.headers.get("x-request-id")).toBe("trace-42");
    expect(last().requestId).toMatch(/^cmpl-trace-42-0-[0-9a-f]{8}$/);
    expect(last().externalReqId).toBe("cmpl-trace-42-0");
    // The same client id twice at once: both served (the engine's ids differ).
    const both = await Promise.all([
      post(stack, "/v1/completions", { prompt: "a", max_tokens: 2 }, { "x-request-id": "same" }),
      post(stack, "/v1/completions", { prompt: "b", max_tokens: 2 }, { "x-request-id": "same" }),
    ]);
    expect(both.map((b) => [b.status, b.body.id])).toEqual([
      [200, "cmpl-same"],
      [200, "cmpl-same"],
    ]);
  });

  it("without the header, the body's request_id; a stream carries X-Request-Id too", async () => {
    const r = await post(stack, "/v1/chat/completions", {
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 2,
      request_id: "mine",
    });
    expect(r.body.id).toBe("chatcmpl-mine");
    const s = await post(
      stack,
      "/v1/chat/completions",
      { messages: [{ role: "user", content: "hi" }], max_tokens: 2, stream: true },
      { "x-request-id": "streamed", origin: "https://ui.example" },
    );
    expect(s.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(s.headers.get("x-request-id")).toBe("streamed");
    expect(s.headers.get("access-control-allow-origin")).toBe("*");
    expect(s.text).toContain('"id":"chatcmpl-streamed"');
  });

  it("priority reaches the engine (int64, lax), default 0", async () => {
    await post(stack, "/v1/completions", { prompt: "hi", max_tokens: 2, priority: 5 });
    expect(last().priority).toBe(5);
    await post(stack, "/v1/chat/completions", { messages: [{ role: "user", content: "x" }], priority: "-3" });
    expect(last().priority).toBe(-3);
    await post(stack, "/v1/completions", { prompt: "hi", max_tokens: 2 });
    expect(last().priority).toBe(0);
    const over = await post(stack, "/v1/completions", { prompt: "hi", priority: 2 ** 63 });
    expect([over.status, over.body.error.param]).toEqual([400, "body.priority"]);
    expect(over.body.error.message).toContain("Input should be less than or equal to 9223372036854775807");
  });

  it("a LoRA adapter by name: loaded at start, its LoRARequest on the request, its name as `model`", async () => {
    expect(stack.lorasAdded).toEqual([{ loraName: "sql-lora", loraIntId: 1, loraPath: "/loras/sql" }]);
    const r = await post(stack, "/v1/completions", { model: "sql-lora", prompt: "hi", max_tokens: 2 });
    expect(r.status).toBe(200);
    expect(r.body.model).toBe("sql-lora");
    expect(last().loraRequest).toEqual({ loraName: "sql-lora", loraIntId: 1, loraPath: "/loras/sql" });
    await post(stack, "/v1/completions", { model: MODEL, prompt: "hi", max_tokens: 2 });
    expect(last().loraRequest).toBeNull();
    const models = (await (await fetch(`${stack.baseUrl}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual([MODEL, "sql-lora"]);
  });

  it("return_tokens_as_token_ids: logprobs tokens as token_id:N (completions and chat)", async () => {
    const prompt = "hello world";
    const ids = await tok.encode(prompt);
    const c = await post(stack, "/v1/completions", {
      prompt,
      max_tokens: 2,
      logprobs: 1,
      return_tokens_as_token_ids: true,
    });
    const lp = c.body.choices[0].logprobs;
    expect(lp.tokens).toEqual(ids.slice(0, 2).map((id) => `token_id:${id}`));
    expect(Object.keys(lp.top_logprobs[0])[0]).toBe(`token_id:${ids[0]}`);
    // Offsets advance by the placeholder's length, as vLLM's do.
    expect(lp.text_offset).toEqual([0, `token_id:${ids[0]}`.length]);
    const chat = await post(stack, "/v1/chat/completions", {
      messages: [{ role: "user", content: prompt }],
      max_tokens: 2,
      logprobs: true,
      top_logprobs: 1,
      return_tokens_as_token_ids: "true",
    });
    const entry = chat.body.choices[0].logprobs.content[0];
    expect(entry.token).toMatch(/^token_id:\d+$/);
    const id = Number(entry.token.slice("token_id:".length));
    // The sampled token's bytes stay its text's; the top entries' are the placeholder's (vLLM).
    expect(entry.bytes).toEqual([...Buffer.from(tok.tokenStrings([id])[0]!, "utf8")]);
    expect(entry.top_logprobs[0]).toMatchObject({ token: entry.token, bytes: [...Buffer.from(entry.token)] });
  });
});

describe("--return-tokens-as-token-ids (server default)", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({}, { returnTokensAsTokenIds: true });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("on for every request; a request's own `false` wins", async () => {
    const ids = await tok.encode("hi there");
    const on = await post(stack, "/v1/completions", { prompt: "hi there", max_tokens: 1, logprobs: 0 });
    expect(on.body.choices[0].logprobs.tokens).toEqual([`token_id:${ids[0]}`]);
    const off = await post(stack, "/v1/completions", {
      prompt: "hi there",
      max_tokens: 1,
      logprobs: 0,
      return_tokens_as_token_ids: false,
    });
    expect(off.body.choices[0].logprobs.tokens).toEqual(tok.tokenStrings(ids.slice(0, 1)));
  });
});
