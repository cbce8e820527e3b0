// vLLM's tests/tool_parsers/test_qwen3coder_tool_parser.py (extraction, type conversion, malformed tags),
// ported with the same tools (sample_tools) and outputs; streaming runs each output token by token with
// the Qwen3 tokenizer and cut at every character position.
import { describe, expect, it } from "vitest";
import type { ToolDefinition } from "../../src/tool-parsers/index.js";
import { qwen3Coder } from "../../src/tool-parsers/qwen3-coder.js";
import { qwen3 } from "../helpers.js";
import { characterSplits, runToolStream, tokenDeltas } from "./stream-helpers.js";

const WEATHER_PARAMS = {
  type: "object",
  properties: {
    city: { type: "string", description: "The city name" },
    state: { type: "string", description: "The state code" },
    unit: { type: "string", enum: ["fahrenheit", "celsius"] },
  },
  required: ["city", "state"],
};
const AREA_PARAMS = {
  type: "object",
  properties: { shape: { type: "string" }, dimensions: { type: "object" }, precision: { type: "integer" } },
};
const TOOLS: ToolDefinition[] = [
  {
    type: "function",
    function: {
      name: "get_current_weather",
      description: "Get the current weather",
      parameters: WEATHER_PARAMS,
    },
  },
  {
    type: "function",
    function: { name: "calculate_area", description: "Calculate area of a shape", parameters: AREA_PARAMS },
  },
];

const weather = (city: string, state: string) =>
  `<tool_call>\n<function=get_current_weather>\n<parameter=city>\n${city}\n</parameter>\n<parameter=state>\n${state}\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>`;

const cases: [string, string, [string, unknown][], string | null][] = [
  [
    "single_tool",
    weather("Dallas", "TX"),
    [["get_current_weather", { city: "Dallas", state: "TX", unit: "fahrenheit" }]],
    null,
  ],
  [
    "single_tool_with_content",
    `Sure! Let me check the weather for you.${weather("Dallas", "TX")}`,
    [["get_current_weather", { city: "Dallas", state: "TX", unit: "fahrenheit" }]],
    "Sure! Let me check the weather for you.",
  ],
  [
    "single_tool_multiline_param",
    '<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n<parameter=dimensions>\n{"width": 10, \n "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n</function>\n</tool_call>',
    [["calculate_area", { shape: "rectangle", dimensions: { width: 10, height: 20 }, precision: 2 }]],
    null,
  ],
  [
    "parallel_tools",
    `${weather("Dallas", "TX")}\n${weather("Orlando", "FL")}`,
    [
      ["get_current_weather", { city: "Dallas", state: "TX", unit: "fahrenheit" }],
      ["get_current_weather", { city: "Orlando", state: "FL", unit: "fahrenheit" }],
    ],
    null,
  ],
  [
    "tool_with_typed_params",
    'Let me calculate that area for you.<tool_call>\n<function=calculate_area>\n<parameter=shape>\ncircle\n</parameter>\n<parameter=dimensions>\n{"radius": 15.5}\n</parameter>\n<parameter=precision>\n3\n</parameter>\n</function>\n</tool_call>',
    [["calculate_area", { shape: "circle", dimensions: { radius: 15.5 }, precision: 3 }]],
    "Let me calculate that area for you.",
  ],
];

describe("qwen3_coder, non-streaming (vLLM test_qwen3coder_tool_parser.py)", () => {
  it("no_tools", () => {
    const text = "This is a test response without any tool calls";
    expect(qwen3Coder.extract(text, TOOLS)).toEqual({ toolsCalled: false, toolCalls: [], content: text });
  });
  it.each(cases)("%s", (_id, output, calls, content) => {
    const r = qwen3Coder.extract(output, TOOLS);
    expect(r.toolsCalled).toBe(true);
    expect(r.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual(calls);
    expect(r.content).toBe(content);
  });
  it("arguments as Python's json.dumps writes them", () => {
    expect(qwen3Coder.extract(weather("Dallas", "TX"), TOOLS).toolCalls[0]!.arguments).toBe(
      '{"city": "Dallas", "state": "TX", "unit": "fahrenheit"}',
    );
  });
  it("fallback_no_tags: <function=…> without <tool_call>", () => {
    const r = qwen3Coder.extract(
      "<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n<parameter=state>\nTX\n</parameter>\n</function>",
      TOOLS,
    );
    expect(r.toolCalls.map((c) => c.name)).toEqual(["get_current_weather"]);
  });
  it("type_conversion: values follow the schema types", () => {
    const tools: ToolDefinition[] = [
      {
        type: "function",
        function: {
          name: "test_types",
          parameters: {
            type: "object",
            properties: {
              int_param: { type: "integer" },
              float_param: { type: "float" },
              bool_param: { type: "boolean" },
              str_param: { type: "string" },
              obj_param: { type: "object" },
            },
          },
        },
      },
    ];
    const r = qwen3Coder.extract(
      '<tool_call>\n<function=test_types>\n<parameter=int_param>\n42\n</parameter>\n<parameter=float_param>\n3.14\n</parameter>\n<parameter=bool_param>\ntrue\n</parameter>\n<parameter=str_param>\nhello world\n</parameter>\n<parameter=obj_param>\n{"key": "value"}\n</parameter>\n</function>\n</tool_call>',
      tools,
    );
    expect(JSON.parse(r.toolCalls[0]!.arguments)).toEqual({
      int_param: 42,
      float_param: 3.14,
      bool_param: true,
      str_param: "hello world",
      obj_param: { key: "value" },
    });
  });
  it("anyof_type_conversion: anyOf / oneOf / type lists (Pydantic's Optional[T])", () => {
    const tools: ToolDefinition[] = [
      {
        type: "function",
        function: {
          name: "test_anyof",
          parameters: {
            type: "object",
            properties: {
              anyof_int: { anyOf: [{ type: "integer" }, { type: "null" }], default: 5 },
              anyof_str: { anyOf: [{ type: "string" }, { type: "null" }] },
              anyof_array: { anyOf: [{ type: "array", items: { type: "string" } }, { type: "null" }] },
              anyof_obj: { anyOf: [{ type: "object" }, { type: "null" }] },
              type_as_array: { type: ["integer", "null"] },
              multi_non_null: { anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] },
            },
          },
        },
      },
    ];
    const r = qwen3Coder.extract(
      '<tool_call>\n<function=test_anyof>\n<parameter=anyof_int>\n5\n</parameter>\n<parameter=anyof_str>\nhello\n</parameter>\n<parameter=anyof_array>\n["a", "b", "c"]\n</parameter>\n<parameter=anyof_obj>\n{"key": "value"}\n</parameter>\n<parameter=type_as_array>\n42\n</parameter>\n<parameter=multi_non_null>\nsome text\n</parameter>\n</function>\n</tool_call>',
      tools,
    );
    expect(JSON.parse(r.toolCalls[0]!.arguments)).toEqual({
      anyof_int: 5,
      anyof_str: "hello",
      anyof_array: ["a", "b", "c"],
      anyof_obj: { key: "value" },
      type_as_array: 42,
      multi_non_null: "some text",
    });
  });
  it("without a schema the values stay strings", () => {
    const r = qwen3Coder.extract(
      "<tool_call>\n<function=f>\n<parameter=n>\n2\n</parameter>\n</function>\n</tool_call>",
      [],
    );
    expect(r.toolCalls[0]!.arguments).toBe('{"n": "2"}');
  });
  it("missing_closing_parameter_tag", () => {
    const r = qwen3Coder.extract(
      "Let me check the weather for you:\n<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>\n<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>",
      TOOLS,
    );
    expect(r.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ["get_current_weather", { city: "Dallas", state: "TX", unit: "fahrenheit" }],
    ]);
    expect(r.content).toContain("Let me check the weather for you:");
  });
});

describe("qwen3_coder, streaming (the same outputs)", () => {
  it.each(cases)("%s: token by token and cut at every character", async (_id, output) => {
    const expected = qwen3Coder.extract(output, TOOLS).toolCalls.map((c) => [c.name, c.arguments]);
    const prefix = output.slice(0, output.indexOf("<tool_call>"));
    for (const deltas of [await tokenDeltas(qwen3(), output), ...characterSplits(output)]) {
      const r = runToolStream(qwen3Coder.stream(TOOLS), deltas);
      expect(r.calls.map((c) => [c.name, c.arguments])).toEqual(expected);
      expect(r.content).toBe(prefix);
    }
  });
  it("arguments arrive parameter by parameter, before the call closes", async () => {
    const s = qwen3Coder.stream(TOOLS);
    const deltas = await tokenDeltas(qwen3(), weather("Dallas", "TX"));
    const fragments = deltas
      .map((d) => s.push(d))
      .flatMap((m) => m?.tool_calls ?? [])
      .map((c) => c.function?.arguments)
      .filter((a) => a !== undefined);
    expect(fragments).toEqual(["{", '"city": "Dallas"', ', "state": "TX"', ', "unit": "fahrenheit"', "}"]);
  });
});
