// vLLM's tests/parser/mistral/test_tool_calls.py (the tool-call extraction cases, both tokenizer
// generations), ported; streaming runs the same outputs token by token and cut at every character.
// vLLM's tests compare arguments as JSON (assert_tool_calls); ids are Mistral's 9 alphanumerics.
import { describe, expect, it } from "vitest";
import type { ToolParser } from "../../src/tool-parsers/index.js";
import { mistral, mistralPreV11 } from "../../src/tool-parsers/mistral.js";
import { qwen3 } from "../helpers.js";
import { characterSplits, runToolStream, tokenDeltas } from "./stream-helpers.js";

type Case = [string, string, [string, unknown][], string | null];

function check(parser: ToolParser, output: string, calls: [string, unknown][], content: string | null) {
  const r = parser.extract(output, []);
  expect(r.toolsCalled).toBe(true);
  expect(r.toolCalls.map((c) => c.name)).toEqual(calls.map((c) => c[0]));
  r.toolCalls.forEach((c, i) => {
    const expected = calls[i]![1];
    if (typeof expected === "string") expect(c.arguments).toBe(expected);
    else expect(JSON.parse(c.arguments)).toEqual(expected);
    expect(c.id).toMatch(/^[A-Za-z0-9]{9}$/);
  });
  expect(r.content).toBe(content);
}

const WEATHER = { city: "San Francisco", state: "CA", unit: "celsius" };

describe("mistral (v11+, [ARGS] in the vocabulary)", () => {
  it("picks v11 with [ARGS] in the vocabulary, the older format without", () => {
    const v11 = mistral.forVocabulary!({ tokenToId: (t) => (t === "[ARGS]" ? 1 : undefined) });
    const old = mistral.forVocabulary!({ tokenToId: () => undefined });
    expect(v11.extract('[TOOL_CALLS]add{"a": 1}', []).toolCalls[0]!.name).toBe("add");
    expect(old.extract('[TOOL_CALLS][{"name": "add", "arguments": {"a": 1}}]', []).toolCalls[0]!.name).toBe(
      "add",
    );
  });
  it("no tools: content as is", () => {
    expect(mistral.extract("This is a test", [])).toEqual({
      toolsCalled: false,
      toolCalls: [],
      content: "This is a test",
    });
  });
  const cases: Case[] = [
    [
      "single_tool_add",
      '[TOOL_CALLS]add_this_and_that{"a": 3.5, "b": 4}',
      [["add_this_and_that", { a: 3.5, b: 4 }]],
      null,
    ],
    [
      "single_tool_weather",
      `[TOOL_CALLS]get_current_weather${JSON.stringify(WEATHER).replaceAll(",", ", ").replaceAll(":", ": ")}`,
      [["get_current_weather", WEATHER]],
      null,
    ],
    [
      "multiple_tool_calls",
      '[TOOL_CALLS]add{"a": 3.5, "b": 4}[TOOL_CALLS]multiply{"a": 3, "b": 6}',
      [
        ["add", { a: 3.5, b: 4 }],
        ["multiply", { a: 3, b: 6 }],
      ],
      null,
    ],
    [
      "single_tool_add_args",
      '[TOOL_CALLS]add_this_and_that[ARGS]{"a": 3.5, "b": 4}',
      [["add_this_and_that", { a: 3.5, b: 4 }]],
      null,
    ],
    [
      "multiple_tool_calls_args",
      '[TOOL_CALLS]add[ARGS]{"a": 3.5, "b": 4}[TOOL_CALLS]multiply[ARGS]{"a": 3, "b": 6}',
      [
        ["add", { a: 3.5, b: 4 }],
        ["multiply", { a: 3, b: 6 }],
      ],
      null,
    ],
    ["content_before_tool_args", 'hi[TOOL_CALLS]add[ARGS]{"a": 1, "b": 2}', [["add", { a: 1, b: 2 }]], "hi"],
    // Unterminated JSON: the raw text is the arguments (vLLM's expected json.dumps(...)[:-2]).
    [
      "complex",
      'hi{hi[TOOL_CALLS]bash{"command": "print(\\"hello world!\\")\\nre.compile(r\'{}\')',
      [["bash", '{"command": "print(\\"hello world!\\")\\nre.compile(r\'{}\')']],
      "hi{hi",
    ],
    [
      "wrong_json",
      'hi{hi[TOOL_CALLS]bash{"command": "print(\\"hello world!\\")\\nre.compile(r\'{}\')"}',
      [["bash", { command: "print(\"hello world!\")\nre.compile(r'{}')" }]],
      "hi{hi",
    ],
    [
      "trailing_text_after_json",
      '[TOOL_CALLS]get_current_weather{"city": "San Francisco"}Estimating the weather...',
      [["get_current_weather", '{"city": "San Francisco"}']],
      null,
    ],
    [
      "trailing_text_after_args_json",
      '[TOOL_CALLS]get_current_weather[ARGS]{"city": "San Francisco"}Estimating the weather...',
      [["get_current_weather", '{"city": "San Francisco"}']],
      null,
    ],
    ["v11_without_args", "[TOOL_CALLS]toolname_no_args", [["toolname_no_args", "{}"]], null],
    [
      "malformed_name_before_marker_emits_empty_name",
      'bash[TOOL_CALLS]{"command": "cat file.py"}',
      [["", { command: "cat file.py" }]],
      "bash",
    ],
    [
      "well_formed_name_unaffected",
      '[TOOL_CALLS]bash[ARGS]{"command": "ls -la"}',
      [["bash", { command: "ls -la" }]],
      null,
    ],
    [
      "empty_name_unparsable_args_no_crash",
      "bash[TOOL_CALLS]{not valid json at all",
      [["", "{not valid json at all"]],
      "bash",
    ],
  ];
  it.each(cases)("%s", (_id, output, calls, content) => check(mistral, output, calls, content));

  const streamable = cases.filter(([id]) => !id.includes("empty_name") && !id.includes("malformed_name"));
  it.each(streamable)("%s, streamed token by token and cut at every character", async (_id, output) => {
    const expected = mistral.extract(output, []);
    for (const deltas of [await tokenDeltas(qwen3(), output), ...characterSplits(output)]) {
      const r = runToolStream(mistral.stream([]), deltas);
      expect(r.calls.map((c) => [c.name, c.arguments])).toEqual(
        expected.toolCalls.map((c) => [c.name, c.arguments]),
      );
      expect(r.content).toBe(output.slice(0, output.indexOf("[TOOL_CALLS]")));
      for (const c of r.calls) expect(c.id).toMatch(/^[A-Za-z0-9]{9}$/);
    }
  });
});

describe("mistral (older tokenizers: [TOOL_CALLS] [{…}])", () => {
  const cases: Case[] = [
    [
      "single_tool_add",
      '[TOOL_CALLS][{"name": "add", "arguments":{"a": 3.5, "b": 4}}]',
      [["add", '{"a": 3.5, "b": 4}']],
      null,
    ],
    [
      "single_tool_weather",
      '[TOOL_CALLS] [{"name": "get_current_weather", "arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}}]',
      [["get_current_weather", WEATHER]],
      null,
    ],
    [
      "argument_before_name",
      '[TOOL_CALLS] [{"arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}, "name": "get_current_weather"}]',
      [["get_current_weather", WEATHER]],
      null,
    ],
    [
      "argument_before_name_and_name_in_argument",
      '[TOOL_CALLS] [{"arguments":{"name": "John Doe"}, "name": "get_age"}]',
      [["get_age", { name: "John Doe" }]],
      null,
    ],
    [
      "multiple_tools",
      '[TOOL_CALLS] [{"name": "add", "arguments": {"a": 3.5, "b": 4}}, {"name": "get_current_weather", "arguments":{"city": "San Francisco", "state": "CA", "unit": "celsius"}}]',
      [
        ["add", { a: 3.5, b: 4 }],
        ["get_current_weather", WEATHER],
      ],
      null,
    ],
    [
      "content_before_tool",
      'Hello[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1, "b": 2}}]',
      [["add", { a: 1, b: 2 }]],
      "Hello",
    ],
    [
      "trailing_data_after_json",
      '[TOOL_CALLS] [{"name": "get_current_weather", "arguments":{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}}]\nextra trailing data',
      [["get_current_weather", { city: "Dallas", state: "TX", unit: "fahrenheit" }]],
      null,
    ],
    [
      "regex_fallback",
      '[TOOL_CALLS]  junk [{"name": "add", "arguments":{"a": 1, "b": 2}}] trail',
      [["add", '{"a": 1, "b": 2}']],
      null,
    ],
  ];
  it.each(cases)("%s", (_id, output, calls, content) => check(mistralPreV11, output, calls, content));
  it("regex_fallback_fails: not called, the text after the marker is content", () => {
    expect(mistralPreV11.extract("[TOOL_CALLS] not json at all", [])).toEqual({
      toolsCalled: false,
      toolCalls: [],
      content: "not json at all",
    });
  });
  it.each(cases.slice(0, 7))(
    "%s, streamed token by token and cut at every character",
    async (_id, output) => {
      const expected = mistralPreV11.extract(output, []);
      for (const deltas of [await tokenDeltas(qwen3(), output), ...characterSplits(output)]) {
        const r = runToolStream(mistralPreV11.stream([]), deltas);
        expect(r.calls.map((c) => [c.name, c.arguments])).toEqual(
          expected.toolCalls.map((c) => [c.name, c.arguments]),
        );
      }
    },
  );
});
