// The response side (vLLM's DelegatingParser.parse / parse_delta and the forced-choice streaming helpers of
// vllm/tool_parsers/streaming.py), driven with deltas of every size: the server's client merges token
// deltas a slow reader has not taken yet, so one delta can hold several tokens.
import { describe, expect, it } from "vitest";
import { assistantMessage, ChatDeltaParser, type ChatOutputConfig, parseOutput } from "../src/chat-output.js";
import { reasoningParser } from "../src/reasoning/index.js";
import { hermes } from "../src/tool-parsers/hermes.js";
import { qwen3 } from "./helpers.js";
import { fold } from "./parsers/stream-helpers.js";

const cfg = (
  toolChoice: ChatOutputConfig["request"]["toolChoice"],
  extra: Partial<ChatOutputConfig> = {},
): ChatOutputConfig => ({
  reasoning: undefined,
  toolParser: hermes,
  request: { tools: [], toolChoice, parallelToolCalls: true },
  includeReasoning: true,
  ...extra,
});

/** Every split of the text into three deltas. */
function* threeWay(text: string): Generator<string[]> {
  for (let i = 1; i < text.length; i++)
    for (let j = i + 1; j < text.length; j++) yield [text.slice(0, i), text.slice(i, j), text.slice(j)];
}

function stream(c: ChatOutputConfig, deltas: readonly string[], prompt: readonly number[] = []) {
  const p = new ChatDeltaParser(c, prompt);
  const folded = fold(deltas.map((d, k) => p.push(d, k === deltas.length - 1)));
  return { ...folded, finish: p.finishReason("stop") };
}

describe('tool_choice "required"', () => {
  const text =
    '[{"name": "get_weather", "parameters": {"city": "Paris"}}, {"name": "get_time", "parameters": {}}]';
  it("whole: the array's calls, arguments as Python's json.dumps", () => {
    const parsed = parseOutput(cfg("required"), text);
    expect(parsed.toolCalls).toEqual([
      { name: "get_weather", arguments: '{"city": "Paris"}' },
      { name: "get_time", arguments: "{}" },
    ]);
    expect(assistantMessage(cfg("required"), parsed, "stop").finishReason).toBe("tool_calls");
    expect(assistantMessage(cfg("required"), parsed, "length").finishReason).toBe("length");
  });
  it("streamed in every three-piece split: both calls, index / id / name first, finish tool_calls", () => {
    for (const deltas of threeWay(text)) {
      const r = stream(cfg("required"), deltas);
      expect(r.calls.map((c) => [c.name, c.arguments])).toEqual([
        ["get_weather", '{"city": "Paris"}'],
        ["get_time", "{}"],
      ]);
      expect(r.finish).toBe("tool_calls");
      expect(r.content).toBe("");
    }
  });
  it("invalid output: no calls, no content (vLLM: [] and None)", () => {
    expect(parseOutput(cfg("required"), "not json")).toMatchObject({ toolCalls: [], content: null });
  });
});

describe("a named tool_choice", () => {
  it("whole and streamed: the output is the call's arguments; finish stays stop", () => {
    const c = cfg({ name: "get_weather" });
    const parsed = parseOutput(c, '{"city": "Paris"}');
    expect(parsed.toolCalls).toEqual([{ name: "get_weather", arguments: '{"city": "Paris"}' }]);
    expect(assistantMessage(c, parsed, "stop")).toMatchObject({
      finishReason: "stop",
      message: { content: "" },
    });
    const r = stream(c, ['{"city"', ': "Paris"}']);
    expect(r.calls.map((x) => [x.name, x.arguments])).toEqual([["get_weather", '{"city": "Paris"}']]);
    expect(r.finish).toBe("stop");
  });
});

describe("reasoning then tools", () => {
  const reasoning = reasoningParser("qwen3").session(qwen3(), {});
  const text = '<think>\nhmm\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>';
  it("tool parsing runs on the answer only, in every three-piece split", () => {
    for (const deltas of threeWay(text)) {
      const r = stream(cfg("auto", { reasoning }), deltas);
      expect(r.reasoning).toBe("\nhmm\n");
      expect(r.content).toBe("\n\n");
      expect(r.calls.map((c) => [c.name, c.arguments])).toEqual([["f", '{"a": 1}']]);
    }
  });
  it("a call inside the reasoning text is not parsed; include_reasoning false hides the reasoning", () => {
    const parsed = parseOutput(cfg("auto", { reasoning, includeReasoning: false }), "<think>x</think>Plain.");
    expect(parsed).toEqual({ reasoning: null, content: "Plain.", toolCalls: null });
    const r = stream(cfg("auto", { reasoning, includeReasoning: false }), ["<think>x", "</think>Plain."]);
    expect([r.reasoning, r.content]).toEqual(["", "Plain."]);
  });
  it("parallel_tool_calls false: only call 0's deltas", () => {
    const two =
      '<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "arguments": {}}</tool_call>';
    const c = {
      ...cfg("auto"),
      request: { tools: [], toolChoice: "auto" as const, parallelToolCalls: false },
    };
    expect(stream(c, [two]).calls.map((x) => x.name)).toEqual(["a"]);
    expect(
      assistantMessage(c, parseOutput(c, two), "stop").message.tool_calls?.map((t) => t.function.name),
    ).toEqual(["a"]);
  });
});
