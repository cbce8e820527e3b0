// vLLM's tests/tool_parsers/test_hermes_tool_parser.py, ported: the same inputs and expected calls, with
// the Qwen3 tokenizer (vLLM uses Qwen/Qwen3-32B's, the same vocabulary).
import { describe, expect, it } from "vitest";
import { hermes } from "../../src/tool-parsers/hermes.js";
import { qwen3 } from "../helpers.js";
import { characterSplits, runToolStream, tokenDeltas } from "./stream-helpers.js";

const tok = qwen3();
const stream = async (text: string, interval = 1) =>
  runToolStream(hermes.stream([]), await tokenDeltas(tok, text, interval));

describe("hermes, streaming (vLLM test_hermes_tool_parser.py)", () => {
  it("just_forward_text: plain text token by token is content, no calls", async () => {
    const text = "This is some prior text that has nothing to do with tool calling.";
    const deltas = await tokenDeltas(tok, text);
    const s = hermes.stream([]);
    const messages = deltas.map((d) => s.push(d));
    expect(messages.every((m) => m !== null && m.tool_calls === undefined)).toBe(true); // one delta each
    expect(messages.map((m) => m?.content).join("")).toBe(text);
  });

  it('failure_case_bug_19056: boolean arguments stream as {"trigger": true}', async () => {
    const r = await stream(
      '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>',
    );
    expect(r.calls).toHaveLength(1);
    expect(r.calls[0]!.name).toBe("final_answer");
    expect(r.calls[0]!.arguments).toBe('{"trigger": true}');
    expect(r.content).toBe("");
  });

  it("streaming: a call written without spaces keeps its arguments", async () => {
    const r = await stream(
      '<tool_call>{"name": "get_current_temperature","arguments": {"location":"San Francisco, California, United States", "unit": "celsius"}}</tool_call>',
    );
    expect(r.calls[0]!.name).toBe("get_current_temperature");
    expect(JSON.parse(r.calls[0]!.arguments)).toEqual({
      location: "San Francisco, California, United States",
      unit: "celsius",
    });
  });

  it.each([2, 3, 5, 8])("tool_call_with_stream_interval %i", async (n) => {
    const r = await stream(
      '<tool_call>{"name": "get_current_temperature", "arguments": {"location": "San Francisco", "unit": "celsius"}}</tool_call>',
      n,
    );
    expect(r.calls[0]!.name).toBe("get_current_temperature");
    expect(JSON.parse(r.calls[0]!.arguments)).toEqual({ location: "San Francisco", unit: "celsius" });
  });

  it.each([2, 3, 5, 8])("content_then_tool_call_with_stream_interval %i", async (n) => {
    const r = await stream(
      'Sure, let me check the weather.<tool_call>{"name": "get_weather", "arguments": {"city": "NYC"}}</tool_call>',
      n,
    );
    expect(r.content).toBe("Sure, let me check the weather.");
    expect(r.calls[0]!.name).toBe("get_weather");
    expect(JSON.parse(r.calls[0]!.arguments)).toEqual({ city: "NYC" });
  });

  it.each([1, 2, 4])("multiple_tool_calls_with_stream_interval %i", async (n) => {
    const r = await stream(
      '<tool_call>{"name": "search", "arguments": {"q": "cats"}}</tool_call><tool_call>{"name": "search", "arguments": {"q": "dogs"}}</tool_call>',
      n,
    );
    expect(r.calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ["search", { q: "cats" }],
      ["search", { q: "dogs" }],
    ]);
    expect(r.calls[0]!.id).not.toBe(r.calls[1]!.id);
  });

  it.each([2, 5])("boolean_args_with_stream_interval %i", async (n) => {
    const r = await stream(
      '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>',
      n,
    );
    expect(r.calls[0]!.name).toBe("final_answer");
    expect(JSON.parse(r.calls[0]!.arguments)).toEqual({ trigger: true });
  });

  it.each([2, 3, 5])("just_forward_text_with_stream_interval %i", async (n) => {
    const text = "This is plain text with no tool calling involved.";
    const r = await stream(text, n);
    expect(r.calls).toEqual([]);
    expect(r.content).toBe(text);
  });

  it("content_and_tool_call_in_single_chunk", () => {
    const r = runToolStream(hermes.stream([]), [
      'Hi!<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>',
    ]);
    expect(r.content).toBe("Hi!");
    expect(r.calls[0]!.name).toBe("f");
    expect(JSON.parse(r.calls[0]!.arguments)).toEqual({ x: 1 });
  });

  it("cut at every character position: the same content and calls, no markup in content", () => {
    const text =
      'Let me look.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2]}}\n</tool_call>\n<tool_call>{"name": "noop", "arguments": {}}</tool_call>';
    for (const deltas of characterSplits(text)) {
      const r = runToolStream(hermes.stream([]), deltas);
      expect(r.content).toBe("Let me look.");
      expect(r.calls.map((c) => [c.name, c.arguments])).toEqual([
        ["get_weather", '{"city": "Paris", "days": [1, 2]}'],
        ["noop", "{}"],
      ]);
    }
  });

  it("a possible start of <tool_call> at the end is held back, then released when it is not one", () => {
    const r = runToolStream(hermes.stream([]), ["a <tool", "_cal", "l? no"]);
    expect(r.messages.map((m) => m.content)).toEqual(["a ", "<tool_call? no"]);
  });
});

describe("hermes, non-streaming (vLLM test_hermes_tool_parser.py)", () => {
  it("no_tool_call", () => {
    expect(hermes.extract("This is not a tool call.", [])).toEqual({
      toolsCalled: false,
      toolCalls: [],
      content: "This is not a tool call.",
    });
  });
  it("tool_call_between_tags", () => {
    const r = hermes.extract(
      '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>',
      [],
    );
    expect(r.toolsCalled).toBe(true);
    expect(r.toolCalls).toEqual([{ name: "final_answer", arguments: '{"trigger": true}' }]);
    expect(r.content).toBeNull();
  });
  it("tool_call_until_eos", () => {
    const r = hermes.extract('<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}', []);
    expect(r.toolsCalled).toBe(true);
    expect(r.toolCalls).toEqual([{ name: "final_answer", arguments: '{"trigger": true}' }]);
  });
  it("tool_call_invalid_json: not called, the whole text is content", () => {
    const text = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}';
    expect(hermes.extract(text, [])).toEqual({ toolsCalled: false, toolCalls: [], content: text });
  });
  it("content before the first call; arguments as Python's json.dumps writes them", () => {
    const r = hermes.extract(
      'Sure.<tool_call>{"name":"f","arguments":{"a":[1,{"b":"ü"}],"c":null}}</tool_call>',
      [],
    );
    expect(r.content).toBe("Sure.");
    expect(r.toolCalls).toEqual([{ name: "f", arguments: '{"a": [1, {"b": "ü"}], "c": null}' }]);
  });
});
