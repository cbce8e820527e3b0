// The server driven by the official `openai` npm client, against the mock engine in a child process that
// echoes the prompt's tokens, so every generated text is known exactly.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { echoedChat, MODEL, qwen3, type Stack, startStack } from "./helpers.js";

const tok = qwen3();
const PROMPT = "The quick brown fox — 你好，世界 😀 jumps over the lazy dog.";

describe("OpenAI client against the server (mock engine, --echo-prompt)", () => {
  let stack: Stack;
  let openai: OpenAI;
  beforeAll(async () => {
    stack = await startStack();
    openai = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("completions, non-streaming: the echoed prompt, finish length, usage", async () => {
    const ids = await tok.encode(PROMPT);
    const res = await openai.completions.create({ model: MODEL, prompt: PROMPT, max_tokens: ids.length });
    expect(res.id).toMatch(/^cmpl-[0-9a-f]{32}$/);
    expect(res.object).toBe("text_completion");
    expect(res.model).toBe(MODEL);
    expect(typeof res.created).toBe("number");
    expect(res.choices).toHaveLength(1);
    expect(res.choices[0]!.index).toBe(0);
    expect(res.choices[0]!.text).toBe(PROMPT);
    expect(res.choices[0]!.finish_reason).toBe("length");
    expect(res.choices[0]!.logprobs).toBeNull();
    expect(res.usage).toEqual({
      prompt_tokens: ids.length,
      completion_tokens: ids.length,
      total_tokens: 2 * ids.length,
      prompt_tokens_details: null,
    });
  });

  it("completions, streaming: deltas add up to the echoed prompt; include_usage sends a last usage chunk", async () => {
    const ids = await tok.encode(PROMPT);
    const stream = await openai.completions.create({
      model: MODEL,
      prompt: PROMPT,
      max_tokens: ids.length,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      for (const c of chunk.choices) text += c.text;
    }
    expect(text).toBe(PROMPT);
    expect(chunks.length).toBeGreaterThan(3);
    const finished = chunks.filter((c) => c.choices[0]?.finish_reason != null);
    expect(finished).toHaveLength(1);
    expect(finished[0]!.choices[0]!.finish_reason).toBe("length");
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    // vLLM writes stream chunks without null fields (exclude_none): no prompt_tokens_details here.
    expect(last.usage).toEqual({
      prompt_tokens: ids.length,
      completion_tokens: ids.length,
      total_tokens: 2 * ids.length,
    });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it("completions: a stop string cuts the text and finishes with stop and the string as stop_reason", async () => {
    const res = await openai.completions.create({
      model: MODEL,
      prompt: "alpha beta gamma STOP delta",
      max_tokens: 64,
      stop: ["STOP"],
    });
    expect(res.choices[0]!.text).toBe("alpha beta gamma ");
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect((res.choices[0] as unknown as { stop_reason: unknown }).stop_reason).toBe("STOP");
  });

  it("chat, non-streaming: the echoed chat prompt up to EOS (<|im_end|>), finish stop, usage", async () => {
    const messages = [{ role: "user", content: "Hello there, how are you?" }];
    const expected = await echoedChat(messages);
    const res = await openai.chat.completions.create({ model: MODEL, messages: messages as never });
    expect(res.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(res.object).toBe("chat.completion");
    expect(res.choices[0]!.message.role).toBe("assistant");
    expect(res.choices[0]!.message.content).toBe(expected.text);
    expect(expected.text).toContain("Hello there, how are you?");
    expect(res.choices[0]!.finish_reason).toBe("stop");
    expect(res.usage).toMatchObject({
      prompt_tokens: expected.promptTokens,
      completion_tokens: expected.completionTokens,
      total_tokens: expected.promptTokens + expected.completionTokens,
    });
  });

  it("chat, streaming: role first, then content deltas adding up exactly, one finish, usage last", async () => {
    const messages = [{ role: "user", content: "Tell me about 東京 and café ☕ please." }];
    const expected = await echoedChat(messages);
    const stream = await openai.chat.completions.create({
      model: MODEL,
      messages: messages as never,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.object).toBe("chat.completion.chunk");
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe(expected.text);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason === "stop")).toHaveLength(1);
    expect(chunks.at(-1)!.usage).toMatchObject({
      prompt_tokens: expected.promptTokens,
      completion_tokens: expected.completionTokens,
    });
  });

  it("chat, continuous_usage_stats: every chunk has usage, the role chunk {prompt, 0, prompt} as vLLM's", async () => {
    const messages = [{ role: "user", content: "Hello!" }];
    const expected = await echoedChat(messages);
    const stream = await openai.chat.completions.create({
      model: MODEL,
      messages: messages as never,
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true } as never,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: "" });
    expect(chunks[0]!.usage).toMatchObject({
      prompt_tokens: expected.promptTokens,
      completion_tokens: 0,
      total_tokens: expected.promptTokens,
    });
    expect(chunks.every((c) => c.usage !== undefined && c.usage !== null)).toBe(true);
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 3 });
    // vLLM serializes chunks with exclude_unset / exclude_none: no prompt_tokens_details key in a stream.
    expect(chunks.filter((c) => c.usage && "prompt_tokens_details" in c.usage)).toEqual([]);
  });

  it("a completion that ends mid-character: no U+FFFD, streamed and not, the same text (packages/text, UTF-8 edges)", async () => {
    // Qwen3: "café ☕" = ca | fé | " \xe2\x98" | "\x95". The mock echoes the prompt: 3 tokens end inside ☕.
    const prompt = [924, 58858, 25125, 243];
    const whole = await openai.completions.create({ model: MODEL, prompt, max_tokens: 3 });
    // vLLM's server answers "café" here: it drops the space held back with the broken bytes.
    expect(whole.choices[0]).toMatchObject({ text: "café ", finish_reason: "length" });
    const stream = await openai.completions.create({ model: MODEL, prompt, max_tokens: 3, stream: true });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.text ?? "");
    expect(pieces.join("")).toBe("café ");
    expect(pieces.some((p) => p.includes("\ufffd"))).toBe(false);
  });

  it("a token whose text is held back still gets its chunk, with empty text, as vLLM's server sends it", async () => {
    // ca | fé | " \xe2\x98" (held back: ☕ is unfinished) | "\x95" | " ok": five tokens, five chunks, the
    // sequence vLLM's own server streams for these tokens (tools/real-engine vllm-server.test.ts).
    // Its own engine with a 20 ms step: outputs the server has not read yet merge (as in vLLM), so the shared
    // 2 ms engine could merge two tokens into one chunk on a loaded machine.
    const slow = await startStack({ stepMs: 20 });
    try {
      await heldBackChunks(new OpenAI({ baseURL: `${slow.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 }));
    } finally {
      await slow.close();
    }
  });

  async function heldBackChunks(openai: OpenAI): Promise<void> {
    const prompt = [924, 58858, 25125, 243, 5394];
    const stream = await openai.completions.create({ model: MODEL, prompt, max_tokens: 5, stream: true });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.text ?? "");
    expect(pieces).toEqual(["ca", "fé", "", " ☕", " ok"]);

    // Chat, no parser: `DeltaMessage(content="")` for the held-back token; a chunk per generated token.
    const messages = [{ role: "user", content: "café ☕ 😀 你好 ☕" }];
    const expected = await echoedChat(messages);
    const chat = await openai.chat.completions.create({
      model: MODEL,
      messages: messages as never,
      max_tokens: expected.promptTokens,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of chat) chunks.push(chunk);
    const tokenChunks = chunks.slice(1).filter((c) => c.choices.length === 1);
    expect(tokenChunks).toHaveLength(chunks.at(-1)!.usage!.completion_tokens);
    // Held back before the end (not only the EOS's chunk).
    expect(tokenChunks.slice(0, -1).filter((c) => c.choices[0]!.delta.content === "").length).toBeGreaterThan(
      0,
    );
    expect(tokenChunks.map((c) => c.choices[0]!.delta.content ?? "").join("")).toBe(expected.text);
    // The EOS's chunk: its text is skipped, vLLM still sends `"delta":{"content":""}` with the finish reason.
    expect(tokenChunks.at(-1)!.choices[0]).toMatchObject({ delta: { content: "" }, finish_reason: "stop" });
  }

  it("chat: max_completion_tokens bounds the output (finish length)", async () => {
    const res = await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "one two three four five six seven eight" }],
      max_completion_tokens: 3,
    });
    expect(res.choices[0]!.finish_reason).toBe("length");
    expect(res.usage!.completion_tokens).toBe(3);
  });

  it("chat logprobs: top_logprobs entries per token, token strings from the tokenizer", async () => {
    const res = await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "hello world" }],
      logprobs: true,
      top_logprobs: 3,
      max_completion_tokens: 4,
    });
    const content = res.choices[0]!.logprobs!.content!;
    expect(content).toHaveLength(4);
    for (const entry of content) {
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.bytes).toEqual([...Buffer.from(entry.token, "utf8")]);
      expect(entry.top_logprobs).toHaveLength(3);
      // vLLM lists the sampled token first in its per-position dict (append_logprobs_for_next_position).
      expect(entry.top_logprobs[0]!.token).toBe(entry.token);
    }
    // The echoed tokens: the chat prompt's first 4 ids, each shown as vLLM shows it (decode([id])).
    const { promptTokenIds } = await tok.encodeChat([{ role: "user", content: "hello world" }], {
      addGenerationPrompt: true,
    });
    expect(content.map((e) => e.token)).toEqual(tok.tokenStrings(promptTokenIds.slice(0, 4)));
  });

  it("completions logprobs: n + 1 entries per position, tokens and text offsets", async () => {
    const prompt = "hello world again";
    const ids = await tok.encode(prompt);
    const res = await openai.completions.create({
      model: MODEL,
      prompt,
      max_tokens: ids.length,
      logprobs: 2,
    });
    const lp = res.choices[0]!.logprobs!;
    expect(lp.tokens).toEqual(tok.tokenStrings(ids));
    expect(lp.tokens!.join("")).toBe(prompt);
    expect(lp.text_offset).toEqual([0, 5, 11]);
    for (const top of lp.top_logprobs!) expect(Object.keys(top!).length).toBeGreaterThanOrEqual(2);
    expect(lp.token_logprobs!.every((x) => typeof x === "number")).toBe(true);
  });

  it("models: the served model with max_model_len", async () => {
    const list = await openai.models.list();
    expect(list.data.map((m) => m.id)).toEqual([MODEL]);
    expect((list.data[0] as unknown as { max_model_len: number }).max_model_len).toBe(
      stack.client.maxModelLen,
    );
  });

  it("an unknown model is a 404 NotFoundError with param model", async () => {
    const error = await openai.chat.completions
      .create({ model: "nope", messages: [{ role: "user", content: "x" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({
      message: "The model `nope` does not exist.",
      type: "NotFoundError",
      param: "model",
      code: 404,
    });
  });
});
