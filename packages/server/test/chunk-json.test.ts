// The per-request template of a plain text chunk gives exactly JSON.stringify of the chunk object the
// generic path builds (vLLM's ChatCompletionStreamResponse / CompletionStreamResponse fields, same order),
// for any text — quotes, control characters, lone surrogates, emoji — with and without usage.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TextChunkTemplate } from "../src/chunk-json.js";
import { streamUsage as usage } from "../src/context.js";

const id = "chatcmpl-0123456789abcdef0123456789abcdef";
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom('"', "\\", "\n", "\u2028", "\ud800", "😀"),
);
const maybeUsage = fc.option(fc.tuple(fc.nat(100_000), fc.nat(100_000)), { nil: undefined });

describe("TextChunkTemplate", () => {
  it("chat: the bytes of JSON.stringify({...base, object, choices: [{index, delta: {content}, logprobs, finish_reason}], usage?})", () => {
    const base = { id, created: 1_796_169_140, model: 'qwen3 "mock"' };
    const template = TextChunkTemplate.chat({ ...base, object: "chat.completion.chunk" });
    fc.assert(
      fc.property(text, maybeUsage, (t, u) => {
        const uo = u === undefined ? undefined : usage(u[0], u[1]);
        const generic = {
          ...base,
          object: "chat.completion.chunk",
          choices: [{ index: 0, delta: { content: t }, logprobs: null, finish_reason: null }],
          ...(uo === undefined ? {} : { usage: uo }),
        };
        expect(u === undefined ? template.json(t) : template.jsonWithUsage(t, u[0], u[1])).toBe(
          JSON.stringify(generic),
        );
      }),
    );
  });

  it("completions: the bytes of JSON.stringify({...base, choices: [{index, text, logprobs, finish_reason, stop_reason}], usage?})", () => {
    const base = { id: "cmpl-1", object: "text_completion", created: 1, model: "m" };
    const template = TextChunkTemplate.completion(base);
    fc.assert(
      fc.property(text, maybeUsage, (t, u) => {
        const uo = u === undefined ? undefined : usage(u[0], u[1]);
        const generic = {
          ...base,
          choices: [{ index: 0, text: t, logprobs: null, finish_reason: null, stop_reason: null }],
          ...(uo === undefined ? {} : { usage: uo }),
        };
        expect(u === undefined ? template.json(t) : template.jsonWithUsage(t, u[0], u[1])).toBe(
          JSON.stringify(generic),
        );
      }),
    );
  });
});
