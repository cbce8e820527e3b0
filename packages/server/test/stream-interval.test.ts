// vLLM's `--stream-interval` and a request's `stream_interval` (vllm/v1/engine/output_processor.py
// make_request_output): the first chunk goes out at once, then one chunk per N or more tokens, the last at
// once; the request may raise the server's interval, not lower it; text and logprobs lose nothing.
import { describe, expect, it } from "vitest";
import { InvalidServerOptionsError } from "../src/errors.js";
import { streamIntervalOf } from "../src/params.js";
import { createServer } from "../src/server.js";
import { sseEvents as events, MODEL, QWEN3_DIR, qwen3, startStack } from "./helpers.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies of many shapes
type Json = any;

/** Tokens per chunk, from continuous usage (each chunk's completion_tokens so far). */
function tokensPerChunk(chunks: Json[]): number[] {
  const counts = chunks.filter((c) => c.choices.length > 0).map((c) => c.usage.completion_tokens as number);
  return counts.map((n, i) => n - (i === 0 ? 0 : counts[i - 1]!));
}

/**
 * What the rule allows: the first chunk carries what was there (the client may already have merged a few
 * steps for a slow reader), every later chunk but the last at least `interval` tokens.
 */
function expectInterval(perChunk: number[], interval: number, total: number) {
  expect(perChunk.reduce((a, b) => a + b, 0)).toBe(total);
  for (const n of perChunk.slice(1, -1)) expect(n).toBeGreaterThanOrEqual(interval);
  expect(perChunk.length).toBeLessThanOrEqual(2 + Math.ceil(total / interval));
}

const completion = (extra: object) => ({
  model: MODEL,
  prompt: "one two three four five six seven eight",
  max_tokens: 21,
  ignore_eos: true,
  stream_options: { include_usage: true, continuous_usage_stats: true },
  ...extra,
});

describe("stream interval", () => {
  it("a request's stream_interval: fewer chunks, the same text, logprobs for every token", async () => {
    const stack = await startStack();
    try {
      const plain = await events(stack, "/v1/completions", completion({ logprobs: 1 }));
      const merged = await events(stack, "/v1/completions", completion({ logprobs: 1, stream_interval: 5 }));
      const text = (chunks: Json[]) => chunks.map((c) => c.choices[0]?.text ?? "").join("");
      expect(text(merged)).toBe(text(plain));
      expectInterval(tokensPerChunk(merged), 5, 21);
      expect(tokensPerChunk(plain).length).toBeGreaterThan(tokensPerChunk(merged).length);
      // Each merged chunk's logprobs cover exactly its tokens, in order.
      const lpTokens = (chunks: Json[]) =>
        chunks.filter((c) => c.choices.length > 0).flatMap((c) => c.choices[0].logprobs.tokens as string[]);
      expect(lpTokens(merged)).toEqual(lpTokens(plain));
      for (const c of merged.filter((c) => c.choices.length > 0)) {
        expect(c.choices[0].logprobs.tokens.length).toBe(tokensPerChunk(merged)[merged.indexOf(c)]!);
      }
      expect(merged.filter((c) => c.choices[0]?.finish_reason === "length")).toHaveLength(1);
    } finally {
      await stack.close();
    }
  });

  it("the server's --stream-interval is the floor: a request may raise it, not lower it; chat too", async () => {
    const stack = await startStack({}, { streamInterval: 4 });
    try {
      expectInterval(tokensPerChunk(await events(stack, "/v1/completions", completion({}))), 4, 21);
      expectInterval(
        tokensPerChunk(await events(stack, "/v1/completions", completion({ stream_interval: 2 }))),
        4,
        21,
      );
      expectInterval(
        tokensPerChunk(await events(stack, "/v1/completions", completion({ stream_interval: 8 }))),
        8,
        21,
      );
      const chat = await events(stack, "/v1/chat/completions", {
        model: MODEL,
        messages: [{ role: "user", content: "count from one to twenty please" }],
        max_tokens: 17,
        ignore_eos: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
      });
      // The role chunk (no tokens) first, then the content chunks.
      expectInterval(tokensPerChunk(chat.slice(1)), 4, 17);
      // Without streaming the interval is 1 (only the final output is read), as in vLLM.
      expect(streamIntervalOf({ stream_interval: 8 }, false, 4)).toBe(1);
      expect(streamIntervalOf({ stream_interval: 8 }, true, 4)).toBe(8);
      expect(streamIntervalOf({ stream_interval: null }, true, 4)).toBe(4);
    } finally {
      await stack.close();
    }
  });

  it("a stream_interval below 1 is a 400; a server option below 1 throws a typed error", async () => {
    const stack = await startStack();
    try {
      const res = await fetch(`${stack.baseUrl}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(completion({ stream: true, stream_interval: 0 })),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).error.param).toBe("body.stream_interval");
      for (const streamInterval of [0, 1.5]) {
        expect(() =>
          createServer({ client: stack.client, tokenizer: qwen3(), modelPath: QWEN3_DIR, streamInterval }),
        ).toThrow(InvalidServerOptionsError);
      }
    } finally {
      await stack.close();
    }
  });
});
