// Sampling many (`n`) and prompting many (a list of prompts) against the echoing mock engine: the child
// requests the engine sees (vLLM's `{index}_{parent}` ids, seed + index), choice indexes prompt * n +
// sample, usage with each prompt counted once, streams with a role chunk per choice, an abort for every
// child when the client goes away; completions `echo` and `prompt_logprobs` (shaped as vLLM's).
import { request as httpRequest } from "node:http";
import type { CallRequest } from "@vllm-engine-core/client";
import { promptLogprobs as mockPromptLogprobs } from "@vllm-engine-core/mock-engine";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { correctedTokenText } from "../src/token-text.js";
import { engineRequestId, sseEvents as events, MODEL, qwen3, type Stack, startStack } from "./helpers.js";

const tok = qwen3();

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies of many shapes
type Json = any;

async function post(
  stack: Stack,
  path: string,
  body: object,
): Promise<{ status: number; body: Json; raw: string }> {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const raw = await res.text();
  return { status: res.status, body: JSON.parse(raw), raw };
}

/** The text the echoing mock generates for a prompt of `ids` in `count` tokens (cycling past its end). */
const echoed = (ids: number[], count: number) =>
  tok.decode(
    Array.from({ length: count }, (_, k) => ids[k % ids.length]!),
    { skipSpecialTokens: true },
  );

describe("n > 1 and several prompts", () => {
  let stack: Stack;
  let openai: OpenAI;
  beforeAll(async () => {
    stack = await startStack();
    openai = new OpenAI({ baseURL: `${stack.baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("completions n = 3 with a seed: children {i}_{id}-0 with seed + i, indexes 0..2, the prompt counted once", async () => {
    const calls: CallRequest[] = [];
    const call = stack.client.call.bind(stack.client);
    vi.spyOn(stack.client, "call").mockImplementation((request, options) => {
      calls.push(request);
      return call(request, options);
    });
    const prompt = "one two three four five";
    const ids = await tok.encode(prompt);
    const res = await post(stack, "/v1/completions", { prompt, n: 3, seed: 42, max_tokens: 3 });
    expect(res.status).toBe(200);
    const id = res.body.id as string;
    expect(calls.map((c) => c.requestId)).toEqual(
      [0, 1, 2].map((i) => expect.stringMatching(new RegExp(`^${i}_${id}-0-[0-9a-f]{8}$`))),
    );
    expect(calls.map((c) => Number(c.samplingParams?.seed))).toEqual([42, 43, 44]);
    expect(calls.every((c) => c.samplingParams?.n === undefined)).toBe(true);
    for (const child of calls) {
      expect(stack.engine.events.some((e) => e.event === "add" && e.requestId === child.requestId)).toBe(
        true,
      );
    }
    expect(res.body.choices.map((c: Json) => [c.index, c.text, c.finish_reason])).toEqual(
      [0, 1, 2].map((i) => [i, echoed(ids, 3), "length"]),
    );
    expect(res.body.usage).toEqual({
      prompt_tokens: ids.length,
      completion_tokens: 9,
      total_tokens: ids.length + 9,
      prompt_tokens_details: null,
    });
  });

  it("no seed: every child gets the parent's sampling params; n = 1 keeps the prompt's own id", async () => {
    const calls: CallRequest[] = [];
    const call = stack.client.call.bind(stack.client);
    vi.spyOn(stack.client, "call").mockImplementation((request, options) => {
      calls.push(request);
      return call(request, options);
    });
    const two = await post(stack, "/v1/chat/completions", {
      messages: [{ role: "user", content: "hi" }],
      n: 2,
      max_tokens: 2,
    });
    const one = await post(stack, "/v1/completions", { prompt: "hi", max_tokens: 2 });
    expect(calls.map((c) => c.requestId)).toEqual([
      expect.stringMatching(new RegExp(`^0_${two.body.id}-[0-9a-f]{8}$`)),
      expect.stringMatching(new RegExp(`^1_${two.body.id}-[0-9a-f]{8}$`)),
      expect.stringMatching(new RegExp(`^${one.body.id}-0-[0-9a-f]{8}$`)),
    ]);
    expect(calls.map((c) => c.samplingParams?.seed ?? null)).toEqual([null, null, null]);
  });

  it("several prompts (strings, token-id lists) × n: index = prompt * n + sample, usage sums each prompt once", async () => {
    const prompts = ["one two three", "four five six seven"];
    const ids = await Promise.all(prompts.map((p) => tok.encode(p)));
    for (const prompt of [prompts, ids]) {
      const res = await post(stack, "/v1/completions", { prompt, n: 2, max_tokens: 2 });
      expect(res.status).toBe(200);
      expect(res.body.choices.map((c: Json) => [c.index, c.text])).toEqual([
        [0, echoed(ids[0]!, 2)],
        [1, echoed(ids[0]!, 2)],
        [2, echoed(ids[1]!, 2)],
        [3, echoed(ids[1]!, 2)],
      ]);
      const promptTokens = ids[0]!.length + ids[1]!.length;
      expect(res.body.usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: 8 });
    }
    // A single token-id list is one prompt.
    const single = await post(stack, "/v1/completions", { prompt: ids[1], max_tokens: 4 });
    expect(single.body.choices.map((c: Json) => c.text)).toEqual([echoed(ids[1]!, 4)]);
    // A mixed list is not one of vLLM's prompt types.
    const mixed = await post(stack, "/v1/completions", { prompt: ["one", ids[0]] });
    expect([mixed.status, mixed.body.error.param]).toEqual([400, "prompt"]);
  });

  it("streaming completions, 2 prompts × 2: chunks carry their index, each index finishes once, usage last", async () => {
    const prompts = ["alpha beta gamma delta", "epsilon zeta"];
    const ids = await Promise.all(prompts.map((p) => tok.encode(p)));
    const max = 4;
    const chunks = await events(stack, "/v1/completions", {
      prompt: prompts,
      n: 2,
      max_tokens: max,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    const usageChunk = chunks.at(-1);
    expect(usageChunk.choices).toEqual([]);
    const promptTokens = ids[0]!.length + ids[1]!.length;
    expect(usageChunk.usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: 4 * max });
    const body = chunks.slice(0, -1);
    expect(body.every((c) => c.choices.length === 1)).toBe(true);
    for (const index of [0, 1, 2, 3]) {
      const mine = body.filter((c) => c.choices[0].index === index);
      const promptIds = ids[Math.floor(index / 2)]!;
      expect(mine.map((c) => c.choices[0].text).join("")).toBe(echoed(promptIds, max));
      expect(
        mine.filter((c) => c.choices[0].finish_reason !== null).map((c) => c.choices[0].finish_reason),
      ).toEqual(["length"]);
      // continuous usage: the choice's own prompt and its own tokens so far.
      expect(mine.at(-1).usage).toMatchObject({ prompt_tokens: promptIds.length, completion_tokens: max });
    }
  });

  it("chat n = 3: non-streaming choices 0..2, the prompt counted once", async () => {
    const messages = [{ role: "user", content: "count to three" }];
    const ids = await chatIds(messages);
    const res = await post(stack, "/v1/chat/completions", { messages, n: 3, max_tokens: 5 });
    expect(res.status).toBe(200);
    expect(res.body.choices.map((c: Json) => [c.index, c.message.content, c.finish_reason])).toEqual(
      [0, 1, 2].map((i) => [i, echoed(ids, 5), "length"]),
    );
    expect(res.body.usage).toMatchObject({ prompt_tokens: ids.length, completion_tokens: 15 });
  });

  it("chat n = 2 streaming: a role chunk per choice first, then deltas by index, summed usage last", async () => {
    const messages = [{ role: "user", content: "stream twice please" }];
    const ids = await chatIds(messages);
    const chunks = await events(stack, "/v1/chat/completions", {
      messages,
      n: 2,
      max_tokens: 6,
      stream_options: { include_usage: true },
    });
    expect(chunks.slice(0, 2).map((c) => c.choices)).toEqual(
      [0, 1].map((index) => [
        { index, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null },
      ]),
    );
    const body = chunks.slice(2, -1);
    for (const index of [0, 1]) {
      const mine = body.filter((c) => c.choices[0].index === index).map((c) => c.choices[0]);
      expect(mine.map((c) => c.delta.content ?? "").join("")).toBe(echoed(ids, 6));
      expect(mine.filter((c) => c.finish_reason !== null).map((c) => c.finish_reason)).toEqual(["length"]);
    }
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: ids.length, completion_tokens: 12 },
    });
  });

  it("a stop string ends only the child that generated it", async () => {
    // "six" comes 6 tokens into the second prompt's echo only.
    const res = await post(stack, "/v1/completions", {
      prompt: ["one two three four five", "one two three four five six seven"],
      max_tokens: 7,
      stop: " six",
    });
    // The first echo cycles past its prompt's end.
    expect(res.body.choices.map((c: Json) => [c.text, c.finish_reason, c.stop_reason])).toEqual([
      ["one two three four fiveone two", "length", null],
      ["one two three four five", "stop", " six"],
    ]);
  });

  it("a client that goes away aborts every child on the engine", async () => {
    const { id, destroy } = await openChatStream(stack, {
      messages: [{ role: "user", content: "an endless story ".repeat(20) }],
      n: 3,
      max_tokens: 3000,
      ignore_eos: true,
      stream: true,
    });
    destroy();
    for (const i of [0, 1, 2]) {
      const pattern = new RegExp(`^${i}_${id}-[0-9a-f]{8}$`);
      const add = await stack.engine.waitForEvent(
        (e) => e.event === "add" && typeof e.requestId === "string" && pattern.test(e.requestId),
        5_000,
      );
      const child = add.requestId as string;
      await stack.engine.waitForEvent(
        (e) => e.event === "abort" && (e.requestIds as string[] | undefined)?.includes(child) === true,
        5_000,
      );
      expect(stack.engine.events.some((e) => e.event === "finished" && e.requestId === child)).toBe(false);
    }
  });

  it("the openai client: chat n = 2 and a completions batch", async () => {
    const chat = await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "hello" }],
      n: 2,
      max_tokens: 3,
    });
    const ids = await chatIds([{ role: "user", content: "hello" }]);
    expect(chat.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, echoed(ids, 3)],
      [1, echoed(ids, 3)],
    ]);
    const batch = await openai.completions.create({
      model: MODEL,
      prompt: ["red green", "blue"],
      max_tokens: 2,
    });
    expect(batch.choices.map((c) => c.index)).toEqual([0, 1]);
    const blue = await tok.encode("blue");
    expect(batch.choices[1]!.text).toBe(echoed(blue, 2));
  });
});

describe("echo and prompt_logprobs", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  // Token ids inside the mock's 32,000-token vocabulary (it scores only those, as a real model would).
  const IDS = [785, 3974, 13876, 1045, 2003]; // "The quick brown some week"

  /** vLLM's prompt_logprobs for the mock's scores of `ids` under `requestId`, computed from the mock. */
  function expectedPromptLogprobs(requestId: string, ids: number[], k: number) {
    const m = mockPromptLogprobs(requestId, ids, k);
    const width = k + 1;
    const tokenIds = Array.from(m.logprobTokenIds.data as Int32Array);
    const lps = Array.from(m.logprobs.data as Float32Array);
    const ranks = Array.from(m.selectedTokenRanks.data as Int32Array);
    const rows: (Record<string, Json> | null)[] = [null];
    const order: number[][] = [];
    for (let r = 0; r < ids.length - 1; r++) {
      const dict: Record<string, Json> = {};
      const keys: number[] = [];
      for (let c = 0; c < width; c++) {
        const tokenId = tokenIds[r * width + c]!;
        if (!keys.includes(tokenId)) keys.push(tokenId);
        dict[tokenId] = {
          logprob: lps[r * width + c],
          rank: c === 0 ? ranks[r] : c,
          // A byte-fallback piece shows vLLM's corrected text (`_verify_tokens`, token-text.ts, tested on
          // its own), with the previous prompt tokens as context; the mock's top k are random per request.
          decoded_token: tok.tokenStrings([tokenId])[0]!.endsWith("\uFFFD")
            ? correctedTokenText(tok, tokenId, ids.slice(Math.max(0, r - 4) + 1, r + 1))
            : tok.tokenStrings([tokenId])[0],
        };
      }
      expect(keys[0]).toBe(ids[r + 1]);
      rows.push(dict);
      order.push(keys);
    }
    return { rows, order };
  }

  it("completions prompt_logprobs: [null, {token id: {logprob, rank, decoded_token}}…] on the choice, keys in vLLM's order", async () => {
    const res = await post(stack, "/v1/completions", { prompt: IDS, max_tokens: 2, prompt_logprobs: 3 });
    expect(res.status).toBe(200);
    const { rows, order } = expectedPromptLogprobs(engineRequestId(stack, `${res.body.id}-0`), IDS, 3);
    const choice = res.body.choices[0];
    expect(choice.prompt_logprobs).toEqual(rows);
    expect(choice.logprobs).toBeNull();
    // The prompt token's key first, then the top k in rank order, as the JSON text has them (a plain JS
    // object would have sorted the integer keys).
    const section = res.raw.slice(res.raw.indexOf('"prompt_logprobs":[null,'));
    const keys = [...section.matchAll(/"(\d+)":\{"logprob"/g)].map((m) => Number(m[1]));
    expect(keys).toEqual(order.flat());
  });

  it("a character split over byte-fallback tokens shows where it completes (vLLM's _verify_tokens)", async () => {
    const crab = [87, 11162, 99, 222, 379]; // "x 🦀 y": " \xf0", "\x9f\xa6", "\x80" are byte pieces
    expect(tok.tokenStrings(crab)).toEqual(["x", " \uFFFD", "\uFFFD", "\uFFFD", " y"]);
    const res = await post(stack, "/v1/completions", {
      prompt: crab,
      max_tokens: 1,
      prompt_logprobs: 0,
      echo: true,
      logprobs: 0,
    });
    expect(res.status).toBe(200);
    const shown = res.body.choices[0].prompt_logprobs
      .slice(1)
      .map((d: Json) => d[Object.keys(d)[0]!].decoded_token);
    expect(shown).toEqual(["", "", " 🦀", " y"]);
    // The echoed prompt's tokens read the same texts; the first (unscored) is its plain decode.
    expect(res.body.choices[0].logprobs.tokens).toEqual(["x", "", "", " 🦀", " y", "x"]);
  });

  it("chat prompt_logprobs: on the response, not the choice; refused with stream, above 20, below -1", async () => {
    // A template without special tokens: the mock scores only ids inside its 32,000-token vocabulary.
    const chat_template = "{% for m in messages %}{{ m.content }}{% endfor %}";
    const messages = [{ role: "user", content: "The quick brown some week" }];
    const ok = await post(stack, "/v1/chat/completions", {
      messages,
      chat_template,
      max_tokens: 1,
      prompt_logprobs: 0,
    });
    expect(ok.status).toBe(200);
    const ids = IDS;
    expect(ok.body.prompt_logprobs).toHaveLength(ids.length);
    expect(ok.body.prompt_logprobs[0]).toBeNull();
    expect(Object.keys(ok.body.prompt_logprobs[1]).map(Number)).toEqual([ids[1]]);
    expect(ok.body.choices[0].prompt_logprobs).toBeUndefined();
    const plain = await post(stack, "/v1/chat/completions", { messages, chat_template, max_tokens: 1 });
    expect(plain.body.prompt_logprobs).toBeNull();
    const streamed = await post(stack, "/v1/chat/completions", {
      messages,
      stream: true,
      prompt_logprobs: 1,
    });
    expect([streamed.status, streamed.body.error.message]).toEqual([
      400,
      "`prompt_logprobs` are not available when `stream=True`.",
    ]);
    const many = await post(stack, "/v1/completions", { prompt: "hi", prompt_logprobs: 21 });
    expect([many.status, many.body.error.param]).toEqual([400, "prompt_logprobs"]);
    const negative = await post(stack, "/v1/completions", { prompt: "hi", prompt_logprobs: -2 });
    expect([negative.status, negative.body.error.param]).toEqual([400, "prompt_logprobs"]);
  });

  it("echo: the prompt's text first; max_tokens 0 returns the prompt only", async () => {
    const prompt = "echo me back";
    const ids = await tok.encode(prompt);
    const res = await post(stack, "/v1/completions", { prompt, echo: true, max_tokens: 2, n: 2 });
    expect(res.body.choices.map((c: Json) => c.text)).toEqual([0, 1].map(() => prompt + echoed(ids, 2)));
    const only = await post(stack, "/v1/completions", {
      prompt: [prompt, "The quick brown some week"],
      echo: true,
      max_tokens: 0,
    });
    expect(only.body.choices.map((c: Json) => [c.text, c.finish_reason])).toEqual([
      [prompt, "length"],
      ["The quick brown some week", "length"],
    ]);
    const streamed = await events(stack, "/v1/completions", { prompt, echo: true, max_tokens: 3 });
    expect(streamed[0].choices[0].text.startsWith(prompt)).toBe(true);
    expect(streamed.map((c) => c.choices[0].text).join("")).toBe(prompt + echoed(ids, 3));
  });

  it("echo with logprobs: the prompt's tokens first (null for the first), scored with `logprobs` top entries", async () => {
    const res = await post(stack, "/v1/completions", { prompt: IDS, echo: true, max_tokens: 2, logprobs: 1 });
    expect(res.status).toBe(200);
    const lp = res.body.choices[0].logprobs;
    const strings = tok.tokenStrings(IDS);
    expect(lp.tokens).toEqual([strings[0], ...strings.slice(1), ...tok.tokenStrings(IDS.slice(0, 2))]);
    expect(lp.token_logprobs[0]).toBeNull();
    expect(lp.top_logprobs[0]).toBeNull();
    const { rows } = expectedPromptLogprobs(engineRequestId(stack, `${res.body.id}-0`), IDS, 1);
    for (let i = 1; i < IDS.length; i++) {
      // The completions shape clamps at -9999 (`max(logprob, -9999.0)`); prompt_logprobs only -inf.
      expect(lp.token_logprobs[i]).toBe(Math.max(rows[i]![IDS[i]!].logprob, -9999));
      expect(Object.keys(lp.top_logprobs[i]).length).toBeLessThanOrEqual(2);
    }
    // Offsets run through the prompt's tokens into the generated ones.
    let offset = 0;
    lp.tokens.forEach((t: string, i: number) => {
      expect(lp.text_offset[i]).toBe(offset);
      offset += [...t].length;
    });
    // vLLM puts the prompt's scores on the choice too (echo asks the engine for them).
    expect(res.body.choices[0].prompt_logprobs).toEqual(rows);
  });
});

describe("chat echo", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("echo prepends the last message when it has the response's role (vLLM's get_chat_request_role)", async () => {
    const messages = [
      { role: "user", content: "finish my sentence" },
      { role: "assistant", content: "The answer is" },
    ];
    const continued = { messages, add_generation_prompt: false, continue_final_message: true, max_tokens: 2 };
    const ids = (await tok.encodeChat(messages, { addGenerationPrompt: false, continueFinalMessage: true }))
      .promptTokenIds;
    const res = await post(stack, "/v1/chat/completions", { ...continued, echo: true, n: 2 });
    expect(res.body.choices.map((c: Json) => [c.message.role, c.message.content])).toEqual(
      [0, 1].map(() => ["assistant", `The answer is${echoed(ids, 2)}`]),
    );
    const chunks = await events(stack, "/v1/chat/completions", { ...continued, echo: true, n: 2 });
    expect(chunks.slice(0, 4).map((c) => [c.choices[0].index, c.choices[0].delta])).toEqual([
      [0, { role: "assistant", content: "" }],
      [1, { role: "assistant", content: "" }],
      [0, { content: "The answer is" }],
      [1, { content: "The answer is" }],
    ]);
    // After a user message with a generation prompt the roles differ: nothing is echoed.
    const user = await post(stack, "/v1/chat/completions", {
      messages: [{ role: "user", content: "hi" }],
      echo: true,
      max_tokens: 1,
    });
    const userIds = await chatIds([{ role: "user", content: "hi" }]);
    expect(user.body.choices[0].message.content).toBe(echoed(userIds, 1));
  });
});

async function chatIds(messages: { role: string; content: string }[]): Promise<number[]> {
  return (await tok.encodeChat(messages, { addGenerationPrompt: true })).promptTokenIds;
}

/** Opens a chat stream with node:http, reads up to its first content chunk, returns its id. */
function openChatStream(stack: Stack, body: object): Promise<{ id: string; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port: stack.port, path: "/v1/chat/completions", method: "POST" },
      (res) => {
        let buffer = "";
        const onData = (chunk: Buffer) => {
          buffer += chunk.toString("utf8");
          const match = /"id":"(chatcmpl-[0-9a-f]+)"/.exec(buffer);
          if (match && buffer.includes('"content":"') && buffer.split("\n\n").length > 4) {
            res.off("data", onData);
            resolve({ id: match[1]!, destroy: () => req.destroy() });
          }
        };
        res.on("data", onData);
      },
    );
    req.setHeader("content-type", "application/json");
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}
