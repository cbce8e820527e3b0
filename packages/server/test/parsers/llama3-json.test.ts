// vLLM's tests/tool_parsers/test_llama3_json_tool_parser.py, ported (inputs and expected calls), plus
// streaming of the same outputs token by token and cut at every character position.
import { describe, expect, it } from "vitest";
import { llama3Json } from "../../src/tool-parsers/llama3-json.js";
import { qwen3 } from "../helpers.js";
import { characterSplits, runToolStream, tokenDeltas } from "./stream-helpers.js";

const x = (text: string) => llama3Json.extract(text, []);

describe("llama3_json, non-streaming (vLLM test_llama3_json_tool_parser.py)", () => {
  it("simple: a call inside text; content is None once called", () => {
    const r = x(
      'Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?',
    );
    expect(r).toEqual({
      toolsCalled: true,
      toolCalls: [{ name: "getOpenIncidentsTool", arguments: "{}" }],
      content: null,
    });
  });
  it("with_arguments", () => {
    const r = x('{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}');
    expect(r.toolCalls[0]!.name).toBe("searchTool");
    expect(r.toolCalls[0]!.arguments).toContain('"query": "test query"');
    expect(r.toolCalls[0]!.arguments).toContain('"limit": 10');
  });
  it("no_json", () => {
    const text = "This is just some text without any tool calls";
    expect(x(text)).toEqual({ toolsCalled: false, toolCalls: [], content: text });
  });
  it("invalid_json", () => {
    const text = '{"name": "invalidTool", "parameters": {invalid json}';
    expect(x(text)).toEqual({ toolsCalled: false, toolCalls: [], content: text });
  });
  it("with_arguments_key", () => {
    const r = x('{"name": "searchTool", "arguments": {"query": "test"}}');
    expect(r.toolCalls).toEqual([{ name: "searchTool", arguments: '{"query": "test"}' }]);
  });
  it.each([
    ["multiple_json", "; "],
    ["multiple_json_with_whitespace", " ; "],
  ])("%s", (_id, sep) => {
    const r = x(
      [
        '{"name": "searchTool", "parameters": {"query": "test1"}}',
        '{"name": "getOpenIncidentsTool", "parameters": {}}',
        '{"name": "searchTool", "parameters": {"query": "test2"}}',
      ].join(sep),
    );
    expect(r.toolCalls.map((c) => c.name)).toEqual(["searchTool", "getOpenIncidentsTool", "searchTool"]);
    expect(r.toolCalls[0]!.arguments).toContain('"query": "test1"');
    expect(r.toolCalls[1]!.arguments).toBe("{}");
    expect(r.toolCalls[2]!.arguments).toContain('"query": "test2"');
  });
  it("multiple_json_with_surrounding_text", () => {
    const r = x(
      'Here are the results: {"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}}; {"name": "searchTool", "parameters": {"query": "test2"}} Would you like to know more?',
    );
    expect(r.toolCalls.map((c) => c.name)).toEqual(["searchTool", "getOpenIncidentsTool", "searchTool"]);
  });
  it("deeply_nested_json", () => {
    const r = x(
      '{"name": "complexTool", "parameters": {"level1": {"level2": {"level3": {"level4": {"value": "deep"}}}}}}',
    );
    expect(JSON.parse(r.toolCalls[0]!.arguments).level1.level2.level3.level4.value).toBe("deep");
  });
  it("multiple_with_deep_nesting", () => {
    const r = x(
      '{"name": "simpleTool", "parameters": {"value": "test"}}; {"name": "complexTool", "parameters": {"config": {"database": {"connection": {"pool": {"size": 10}}}}}}',
    );
    expect(r.toolCalls.map((c) => c.name)).toEqual(["simpleTool", "complexTool"]);
    expect(JSON.parse(r.toolCalls[0]!.arguments).value).toBe("test");
    expect(JSON.parse(r.toolCalls[1]!.arguments).config.database.connection.pool.size).toBe(10);
  });
  it("with_quotes_and_brackets_in_string", () => {
    const r = x(
      '{"name": "searchTool", "parameters": {"query": "test {value} [complex]","nested": {"inner": "more {brackets}"}}}',
    );
    expect(JSON.parse(r.toolCalls[0]!.arguments)).toEqual({
      query: "test {value} [complex]",
      nested: { inner: "more {brackets}" },
    });
  });
  it("with_escaped_quotes_in_nested_json", () => {
    const r = x('{"name": "parserTool", "parameters": {"text": "He said \\"Hello {world}\\""}}');
    expect(JSON.parse(r.toolCalls[0]!.arguments).text).toBe('He said "Hello {world}"');
  });
  it("missing_name_key", () => {
    expect(x('{"parameters": {}}')).toEqual({
      toolsCalled: false,
      toolCalls: [],
      content: '{"parameters": {}}',
    });
  });
  it("missing_parameters_and_arguments_key", () => {
    const text = '{"name": "toolWithoutParams"}';
    expect(x(text)).toEqual({ toolsCalled: false, toolCalls: [], content: text });
  });
});

describe("llama3_json, streaming (the same outputs)", () => {
  const cases = [
    '{"name": "searchTool", "parameters": {"query": "test query", "limit": 10}}',
    '{"name": "searchTool", "parameters": {"query": "test1"}}; {"name": "getOpenIncidentsTool", "parameters": {}}',
    '<|python_tag|>{"name": "parserTool", "arguments": {"text": "He said \\"Hello {world}\\"", "n": [1, 2.5, null]}}',
  ];
  it.each(cases)("token by token and cut at every character: %s", async (text) => {
    const expected = llama3Json.extract(text, []).toolCalls.map((c) => [c.name, c.arguments]);
    const splits = [await tokenDeltas(qwen3(), text), ...characterSplits(text)];
    for (const deltas of splits) {
      const r = runToolStream(llama3Json.stream([]), deltas);
      expect(r.calls.map((c) => [c.name, c.arguments])).toEqual(expected);
      expect(r.content).toBe("");
    }
  });
  it("an output that does not start with { is content, as vLLM streams it", () => {
    const r = runToolStream(llama3Json.stream([]), ["Here is ", '{"name": "a", "parameters": {}}']);
    expect(r.content).toBe('Here is {"name": "a", "parameters": {}}');
    expect(r.calls).toEqual([]);
  });
});
