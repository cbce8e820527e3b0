// Raw HTTP against the server: error shapes and status codes, vLLM's utility endpoints, client disconnects
// (the request is aborted on the mock engine) and backpressure (a paused reader slows nobody else).

import { randomUUID } from "node:crypto";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { connect, createServer as createNetServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { engineRequestId, MODEL, QWEN3_DIR, qwen3, type Stack, startStack } from "./helpers.js";

const tok = qwen3();

/** The engine's request id is the response id, "-", then 8 random hex characters (vLLM's assign_request_id). */
const engineIdOf = (responseId: string) => (engineId: string) =>
  new RegExp(`^${responseId}-[0-9a-f]{8}$`).test(engineId);

async function post(stack: Stack, path: string, body: string | object, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text), headers: res.headers };
}

/** Opens a streaming request with node:http; resolves with the response once headers arrive. */
function openStream(
  stack: Stack,
  path: string,
  body: object,
): Promise<{ res: IncomingMessage; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port: stack.port,
        path,
        method: "POST",
        headers: { "content-type": "application/json" },
      },
      (res) => resolve({ res, destroy: () => req.destroy() }),
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** Reads SSE events until `count` were seen (then stops reading), or to the end. */
function readEvents(res: IncomingMessage, count = Number.POSITIVE_INFINITY): Promise<string[]> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const events: string[] = [];
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      let i = buffer.indexOf("\n\n");
      while (i !== -1) {
        events.push(buffer.slice(0, i));
        buffer = buffer.slice(i + 2);
        i = buffer.indexOf("\n\n");
      }
      if (events.length >= count) {
        res.off("data", onData);
        res.pause();
        resolve(events);
      }
    };
    res.on("data", onData);
    res.once("end", () => resolve(events));
    res.once("error", reject);
  });
}

/**
 * A reader on a bare TCP socket (node:http's client keeps reading into its own buffer while paused): sends
 * the request, and `pause()` really stops reading, so the kernel buffers fill and the server sees a full
 * socket. `events()` reads the rest (chunked transfer decoding) and returns every SSE event.
 */
class RawSseReader {
  readonly #socket: Socket;
  #raw = Buffer.alloc(0);
  #ended: Promise<void>;
  constructor(socketPath: string, path: string, body: object) {
    const json = JSON.stringify(body);
    this.#socket = connect(socketPath);
    this.#socket.write(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`,
    );
    const chunks: Buffer[] = [];
    this.#ended = new Promise((resolve, reject) => {
      // The stream is complete at its [DONE] event (the connection itself may linger).
      this.#socket.on("data", (c: Buffer) => {
        chunks.push(c);
        if (c.subarray(-64).toString("latin1").includes("data: [DONE]\n\n")) {
          this.#raw = Buffer.concat(chunks);
          this.#socket.destroy();
          resolve();
        }
      });
      this.#socket.once("error", reject);
    });
    this.received = () => chunks.reduce((n, c) => n + c.length, 0);
  }
  readonly received: () => number;
  pause(): void {
    this.#socket.pause();
  }
  async events(): Promise<{ events: string[]; bodyBytes: number }> {
    this.#socket.resume();
    await this.#ended;
    const raw = this.#raw;
    const headerEnd = raw.indexOf("\r\n\r\n");
    let at = headerEnd + 4;
    const parts: Buffer[] = [];
    // With `connection: close` Node sends the body as is, up to the close; else chunked.
    const chunked = /transfer-encoding: chunked/i.test(raw.subarray(0, headerEnd).toString("latin1"));
    if (!chunked) parts.push(raw.subarray(at));
    while (chunked) {
      const eol = raw.indexOf("\r\n", at);
      const size = Number.parseInt(raw.subarray(at, eol).toString("latin1"), 16);
      if (size === 0) break;
      parts.push(raw.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    const body = Buffer.concat(parts).toString("utf8");
    return { events: body.split("\n\n").filter((e) => e !== ""), bodyBytes: Buffer.byteLength(body) };
  }
}

const payloads = (events: string[]) =>
  events.filter((e) => e !== "data: [DONE]").map((e) => JSON.parse(e.replace(/^data: /, "")));

describe("errors in OpenAI's shape", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({}, { maxModelLen: 64 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("bad JSON → 400 as vLLM's validation handler words pydantic's json_invalid", async () => {
    const r = await post(stack, "/v1/chat/completions", "{not json");
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: "Bad Request", code: 400, param: "body.1" });
    expect(r.body.error.message).toMatch(
      /^1 validation error:\n {2}\{'type': 'json_invalid', 'loc': \('body', 1\), 'msg': 'JSON decode error', 'input': \{\}, 'ctx': \{'error': /,
    );
  });

  it("unknown model → 404 NotFoundError, param model (vLLM's check_model)", async () => {
    const r = await post(stack, "/v1/completions", { model: "other", prompt: "hi" });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({
      error: {
        message: "The model `other` does not exist.",
        type: "NotFoundError",
        param: "model",
        code: 404,
      },
    });
  });

  it("prompt plus max_tokens beyond max_model_len → 400, param input_tokens", async () => {
    const prompt = "word ".repeat(80);
    const r = await post(stack, "/v1/completions", { model: MODEL, prompt, max_tokens: 4 });
    expect(r.status).toBe(400);
    expect(r.body.error.param).toBe("input_tokens");
    expect(r.body.error.message).toMatch(/^This model's maximum context length is 64 tokens/);
    const chat = await post(stack, "/v1/chat/completions", { messages: [{ role: "user", content: prompt }] });
    expect(chat.status).toBe(400);
    expect(chat.body.error.param).toBe("input_tokens");
  });

  // vLLM's words, str(VLLMValidationError) as create_error_response writes it (vllm/exceptions.py __str__
  // appends the parameter and value): vllm/renderers/params.py TokenizeParams._token_len_check, and
  // SamplingParams._verify_args for the max_tokens of 0 that get_max_tokens leaves for a prompt filling
  // max_model_len (vllm/entrypoints/serve/utils/api_utils.py).
  it("a prompt filling or passing max_model_len → 400 with vLLM's message, parameter and value", async () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => 100 + i);
    const full = await post(stack, "/v1/completions", { model: MODEL, prompt: ids(64), max_tokens: null });
    expect(full.status).toBe(400);
    expect(full.body.error).toEqual({
      message: "max_tokens must be at least 1, got 0. (parameter=max_tokens, value=0)",
      type: "BadRequestError",
      param: "max_tokens",
      code: 400,
    });
    const fullPlusOne = await post(stack, "/v1/completions", {
      model: MODEL,
      prompt: ids(64),
      max_tokens: 1,
    });
    expect(fullPlusOne.status).toBe(400);
    expect(fullPlusOne.body.error).toEqual({
      message:
        "This model's maximum context length is 64 tokens. However, you requested 1 output tokens and your " +
        "prompt contains at least 64 input tokens, for a total of at least 65 tokens. Please reduce the " +
        "length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=64)",
      type: "BadRequestError",
      param: "input_tokens",
      code: 400,
    });
    const longer = await post(stack, "/v1/completions", { model: MODEL, prompt: ids(70), max_tokens: 4 });
    expect(longer.status).toBe(400);
    expect(longer.body.error.message).toBe(
      "This model's maximum context length is 64 tokens. However, you requested 4 output tokens and your " +
        "prompt contains 70 input tokens, for a total of 74 tokens. Please reduce the length of the input " +
        "prompt or the number of requested output tokens. (parameter=input_tokens, value=70)",
    );
    const ok = await post(stack, "/v1/completions", { model: MODEL, prompt: ids(63), max_tokens: null });
    expect(ok.status).toBe(200);
    expect(ok.body.usage).toMatchObject({ prompt_tokens: 63, completion_tokens: 1 });
  });

  // session_id (vLLM after the pin, #48048): the body's `session_id`, else the X-Session-ID header, reaches
  // the engine as EngineCoreRequest's 21st element; an engine up to the pin skips it (the mock logs it).
  it("session_id: from the body, else the X-Session-ID header, to the engine's request", async () => {
    const skipped = (id: string) =>
      stack.engine.events.find((e) => e.event === "add" && e.requestId === id)?.skippedTrailing;
    const body = { model: MODEL, prompt: [1, 2, 3], max_tokens: 2 };
    const fromBody = await post(
      stack,
      "/v1/completions",
      { ...body, session_id: "s-body" },
      {
        "x-session-id": "s-header",
      },
    );
    expect(fromBody.status).toBe(200);
    expect(skipped(engineRequestId(stack, `${fromBody.body.id}-0`))).toEqual(["s-body"]);
    const fromHeader = await post(stack, "/v1/completions", body, { "X-Session-ID": "s-header" });
    expect(skipped(engineRequestId(stack, `${fromHeader.body.id}-0`))).toEqual(["s-header"]);
    const chat = await post(
      stack,
      "/v1/chat/completions",
      { model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 2 },
      { "x-session-id": "s-chat" },
    );
    expect(chat.status).toBe(200);
    expect(skipped(engineRequestId(stack, chat.body.id))).toEqual(["s-chat"]);
    const chatBody = await post(stack, "/v1/chat/completions", {
      model: MODEL,
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 2,
      session_id: "s-chat-body",
    });
    expect(skipped(engineRequestId(stack, chatBody.body.id))).toEqual(["s-chat-body"]);
    // Without one, the request is the pin's 20 elements: nothing skipped.
    const none = await post(stack, "/v1/completions", body);
    expect(skipped(engineRequestId(stack, `${none.body.id}-0`))).toBeUndefined();
    const bad = await post(stack, "/v1/completions", { ...body, session_id: 7 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("session_id");
  });

  it("an engine validation failure (InvalidRequestError) → 400 with param = the field", async () => {
    const r = await post(stack, "/v1/completions", { prompt: "hi", max_tokens: 4, temperature: 5 });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: "BadRequestError", param: "temperature", code: 400 });
    const p = await post(stack, "/v1/chat/completions", {
      messages: [{ role: "user", content: "hi" }],
      top_p: 0,
    });
    expect(p.body.error.param).toBe("top_p");
    const stop = await post(stack, "/v1/completions", { prompt: "hi", stop: [""] });
    expect(stop.status).toBe(400);
    expect(stop.body.error.param).toBe("stop");
  });

  it("n < 1, n > 1 with greedy sampling, a wrongly typed field, top_logprobs without logprobs, too many logprobs → 400", async () => {
    const n = await post(stack, "/v1/completions", { prompt: "hi", n: 0 });
    expect([n.status, n.body.error.param, n.body.error.message]).toEqual([
      400,
      "n",
      "n must be at least 1, got 0.",
    ]);
    // SamplingParams._verify_greedy_sampling, on the parent: its children (n = 1 each) would pass.
    const greedy = await post(stack, "/v1/chat/completions", {
      messages: [{ role: "user", content: "hi" }],
      n: 2,
      temperature: 0,
    });
    expect([greedy.status, greedy.body.error.param]).toEqual([400, "n"]);
    expect(greedy.body.error.message).toMatch(/n must be 1 when using greedy sampling/);
    const typed = await post(stack, "/v1/completions", { prompt: "hi", max_tokens: "many" });
    // A schema refusal: vLLM's validation handler names the field with its location ("body.max_tokens").
    expect([typed.status, typed.body.error.param]).toEqual([400, "body.max_tokens"]);
    const top = await post(stack, "/v1/chat/completions", {
      messages: [{ role: "user", content: "hi" }],
      top_logprobs: 2,
    });
    expect([top.status, top.body.error.param]).toEqual([400, "top_logprobs"]);
    const many = await post(stack, "/v1/completions", { prompt: "hi", logprobs: 21 });
    expect([many.status, many.body.error.param]).toEqual([400, "logprobs"]);
  });

  it("unknown route → 404 in the same shape", async () => {
    const r = await fetch(`${stack.baseUrl}/v1/nothing`);
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { type: string } }).error.type).toBe("NotFoundError");
  });

  it("/tokenize and /detokenize in vLLM's shapes", async () => {
    const text = "Hello, 世界!";
    const ids = await tok.encode(text);
    const t = await post(stack, "/tokenize", { prompt: text, return_token_strs: true });
    expect(t.status).toBe(200);
    expect(t.body).toEqual({
      count: ids.length,
      max_model_len: 64,
      tokens: ids,
      token_strs: ids.map((id) => tok.idToToken(id)),
    });
    const chat = await post(stack, "/tokenize", { messages: [{ role: "user", content: "hi" }] });
    const { promptTokenIds } = await tok.encodeChat([{ role: "user", content: "hi" }], {
      addGenerationPrompt: true,
    });
    expect(chat.body).toMatchObject({
      count: promptTokenIds.length,
      tokens: promptTokenIds,
      token_strs: null,
    });
    const d = await post(stack, "/detokenize", { tokens: ids });
    expect(d.body).toEqual({ prompt: text });
  });

  it("/health 200, /version, /v1/models", async () => {
    expect((await fetch(`${stack.baseUrl}/health`)).status).toBe(200);
    const v = await (await fetch(`${stack.baseUrl}/version`)).json();
    expect(v).toMatchObject({ version: expect.any(String), vllm_version: stack.client.vllmVersion });
    const m = (await (await fetch(`${stack.baseUrl}/v1/models`)).json()) as { data: unknown[] };
    expect(m.data[0]).toMatchObject({ id: MODEL, object: "model", root: QWEN3_DIR, max_model_len: 64 });
  });
});

describe("engine death", () => {
  it("/health turns 503 and generation answers 503 ServiceUnavailableError", async () => {
    const stack = await startStack();
    try {
      stack.engine.kill("SIGKILL");
      const deadline = Date.now() + 20_000;
      while ((await fetch(`${stack.baseUrl}/health`)).status !== 503) {
        if (Date.now() > deadline) throw new Error("health never turned 503");
        await new Promise((r) => setTimeout(r, 50));
      }
      const r = await post(stack, "/v1/completions", { prompt: "hi", max_tokens: 2 });
      expect(r.status).toBe(503);
      expect(r.body.error).toMatchObject({ type: "ServiceUnavailableError", code: 503 });
    } finally {
      await stack.close();
    }
  });
});

describe("closing the server", () => {
  it("app.close() with a stream open cuts the stream, aborts its request on the engine and returns", async () => {
    const stack = await startStack({ stepMs: 20 });
    try {
      const { res } = await openStream(stack, "/v1/chat/completions", {
        messages: [{ role: "user", content: "an endless story" }],
        max_tokens: 3000,
        ignore_eos: true,
        stream: true,
      });
      const first = await readEvents(res, 2);
      const id = payloads(first)[0].id as string;
      const ended = new Promise<string>((resolve) => {
        res.once("close", () => resolve("closed"));
        res.resume();
      });
      const closed = stack.app.close().then(() => "returned");
      const timeout = new Promise<string>((resolve) =>
        setTimeout(() => resolve("still open after 10 s"), 10_000),
      );
      expect(await Promise.race([closed, timeout])).toBe("returned");
      expect(await ended).toBe("closed");
      // The engine's id is the response's plus vLLM's 8-character suffix (engineIdOf).
      const abort = await stack.engine.waitForEvent(
        (e) => e.event === "abort" && (e.requestIds as string[] | undefined)?.some(engineIdOf(id)) === true,
        5_000,
      );
      expect((abort.removed as string[]).map(engineIdOf(id))).toEqual([true]);
    } finally {
      await stack.close();
    }
  });
});

describe("streams over raw HTTP", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ stepMs: 2, tokensPerStep: 16, readyResponse: { maxModelLen: 20_000 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("SSE framing: data events, [DONE] last, text/event-stream", async () => {
    const { res } = await openStream(stack, "/v1/completions", {
      prompt: "one two three",
      max_tokens: 3,
      stream: true,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/event-stream/);
    const events = await readEvents(res);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(events.every((e) => e.startsWith("data: "))).toBe(true);
    expect(
      payloads(events)
        .map((p) => p.choices[0].text)
        .join(""),
    ).toBe("one two three");
  });

  it("a client that disconnects mid-stream aborts its request on the engine", async () => {
    const content = "lorem ipsum dolor sit amet ".repeat(40);
    const { res, destroy } = await openStream(stack, "/v1/chat/completions", {
      messages: [{ role: "user", content }],
      max_tokens: 3000,
      stream: true,
    });
    const events = await readEvents(res, 4);
    const id = payloads(events)[0].id as string;
    expect(id).toMatch(/^chatcmpl-/);
    destroy();
    const abort = await stack.engine.waitForEvent(
      (e) => e.event === "abort" && (e.requestIds as string[] | undefined)?.some(engineIdOf(id)) === true,
      5_000,
    );
    expect((abort.removed as string[]).map(engineIdOf(id))).toEqual([true]);
    expect(
      stack.engine.events.some((e) => e.event === "finished" && engineIdOf(id)(e.requestId as string)),
    ).toBe(false);
  });

  it("a paused reader waits on its socket only: fast readers finish exactly, then it finishes exactly too", async () => {
    // Big events (20 top logprobs each) so that the paused stream fills the socket buffers quickly.
    const content = "slow reader ".repeat(100);
    const slowBody = {
      messages: [{ role: "user", content }],
      max_tokens: 16_000,
      ignore_eos: true, // the echo cycles through the prompt (past its <|im_end|>) for all 16k tokens
      stream: true,
      logprobs: true,
      top_logprobs: 20,
    };
    const waitsBefore = stack.app.sseStats.drainWaits;
    // The slow reader comes in over a Unix socket handed to the same HTTP server: its kernel buffers are
    // small and fixed (TCP on loopback autotunes its receive buffer up to tens of MB), so a paused reader
    // fills them after a few hundred KB and the server meets a full socket for good.
    const socketPath = join(tmpdir(), `vec-srv-${randomUUID().slice(0, 8)}.http.sock`);
    const unix = createNetServer((socket) => stack.app.server.emit("connection", socket));
    await new Promise<void>((resolve) => unix.listen(socketPath, resolve));
    onTestFinished(() => new Promise<void>((resolve) => unix.close(() => resolve())));
    const slow = new RawSseReader(socketPath, "/v1/chat/completions", slowBody);
    await expect.poll(() => slow.received(), { timeout: 10_000 }).toBeGreaterThan(0);
    slow.pause(); // read a little, then stop reading
    const openai = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
    const prompts = Array.from(
      { length: 4 },
      (_, i) => `fast reader ${i}: ${"the quick brown fox ".repeat(5)}`,
    );
    const started = Date.now();
    const texts = await Promise.all(
      prompts.map(async (prompt) => {
        const ids = await tok.encode(prompt);
        const stream = await openai.completions.create({
          model: MODEL,
          prompt,
          max_tokens: ids.length,
          stream: true,
        });
        let text = "";
        for await (const chunk of stream) text += chunk.choices[0]?.text ?? "";
        return text;
      }),
    );
    expect(texts).toEqual(prompts);
    expect(Date.now() - started).toBeLessThan(20_000);
    // The paused stream met a full socket and stopped reading from the engine.
    await expect
      .poll(() => stack.app.sseStats.drainWaits - waitsBefore, { timeout: 10_000 })
      .toBeGreaterThan(0);

    // Resumed, it gets every token: the chat prompt's ids cycled for 16k tokens, decoded.
    const { events: rest, bodyBytes: bytes } = await slow.events();
    const all = payloads(rest);
    const text = all.map((p) => p.choices[0]?.delta?.content ?? "").join("");
    const { promptTokenIds } = await tok.encodeChat([{ role: "user", content }], {
      addGenerationPrompt: true,
    });
    const cycled = Array.from({ length: 16_000 }, (_, i) => promptTokenIds[i % promptTokenIds.length]!);
    const expected = tok.decode(cycled, { skipSpecialTokens: true });
    // Compared as a boolean plus lengths: a diff of two 60k-character strings is too slow to print.
    expect([text.length, text === expected]).toEqual([expected.length, true]);
    expect(all.flatMap((p) => p.choices[0]?.logprobs?.content ?? []).length).toBe(16_000);
    expect(all.at(-1).choices[0].finish_reason).toBe("length");
    expect(rest.at(-1)).toBe("data: [DONE]");
    // About 24 MB went through that stream, yet the server never queued more than one event past
    // the socket's high-water mark: it read the engine only as fast as the socket drained.
    expect(bytes).toBeGreaterThan(15_000_000);
    expect(stack.app.sseStats.maxBufferedBytes).toBeLessThan(256 * 1024);
  });
});
