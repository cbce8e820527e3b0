// The request side of tool calling against vLLM's behaviour: the JSON schema a forced tool choice puts on
// the output (vllm/tool_parsers/utils.py get_json_schema_from_tools), the server-flag checks
// (online_renderer.py), and messages as the template gets them (chat_utils.py _postprocess_messages).
import { describe, expect, it } from "vitest";
import { chatParsing } from "../src/chat-parsing.js";
import type { ServerContext } from "../src/context.js";
import { parserServing } from "../src/parser-options.js";
import { checkToolServing, templateMessages, toolChoiceSchema, toolRequestOf } from "../src/tool-calls.js";
import { hermes } from "../src/tool-parsers/hermes.js";
import { qwen3 } from "./helpers.js";

const weather = {
  type: "function",
  function: {
    name: "get_weather",
    parameters: {
      type: "object",
      properties: { city: { $ref: "#/$defs/City" } },
      $defs: { City: { type: "string" } },
    },
  },
};
const time = { type: "function", function: { name: "get_time" } };

describe("tool_choice → output constraint", () => {
  it('"required": an array of {name, parameters} objects, at least one, $defs hoisted', () => {
    const schema = toolChoiceSchema(toolRequestOf({ tools: [weather, time], tool_choice: "required" }));
    expect(schema).toEqual({
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        anyOf: [
          {
            properties: {
              name: { type: "string", enum: ["get_weather"] },
              parameters: { type: "object", properties: { city: { $ref: "#/$defs/City" } } },
            },
            required: ["name", "parameters"],
          },
          {
            properties: {
              name: { type: "string", enum: ["get_time"] },
              parameters: { type: "object", properties: {} },
            },
            required: ["name", "parameters"],
          },
        ],
      },
      $defs: { City: { type: "string" } },
    });
  });
  it("a named function: its parameters schema; none for auto / none / a function without parameters", () => {
    const named = (name: string) => ({ type: "function", function: { name } });
    expect(
      toolChoiceSchema(toolRequestOf({ tools: [weather, time], tool_choice: named("get_weather") })),
    ).toEqual(weather.function.parameters);
    expect(
      toolChoiceSchema(toolRequestOf({ tools: [weather, time], tool_choice: named("get_time") })),
    ).toBeUndefined();
    expect(toolChoiceSchema(toolRequestOf({ tools: [weather] }))).toBeUndefined();
    expect(toolChoiceSchema(toolRequestOf({ tools: [weather], tool_choice: "none" }))).toBeUndefined();
  });
  it("two tools defining one $defs name differently are refused", () => {
    const other = {
      type: "function",
      function: { name: "x", parameters: { $defs: { City: { type: "integer" } } } },
    };
    expect(() =>
      toolChoiceSchema(toolRequestOf({ tools: [weather, other], tool_choice: "required" })),
    ).toThrow("Tool definition 'City' has multiple schemas, which is not supported.");
  });
  it("the sampling parameters get the schema as structured outputs and keep special tokens (hermes)", () => {
    const ctx = {
      tokenizer: qwen3(),
      ...parserServing({ enableAutoToolChoice: true, toolCallParser: "hermes" }, qwen3()),
    } as unknown as ServerContext;
    const p = chatParsing(
      ctx,
      { tools: [weather], tool_choice: "required", response_format: { type: "json_object" } },
      [],
      undefined,
    );
    expect(p.sampling.structuredOutputs).toEqual({ json: toolChoiceSchema(p.output.request) });
    expect(p.sampling.skipSpecialTokens).toBe(false);
    const none = chatParsing(ctx, { tools: [weather], tool_choice: "none" }, [], undefined);
    expect(none.sampling).toEqual({});
  });
});

describe("the engine request's reasoning fields (vLLM's chat endpoint)", () => {
  const ctx = (reasoning?: string) =>
    ({
      tokenizer: qwen3(),
      ...parserServing(reasoning ? { reasoningParser: reasoning } : {}, qwen3()),
    }) as unknown as ServerContext;
  it("reasoning_ended from the prompt with a reasoning parser, true when reasoning is hidden, unset otherwise", async () => {
    const open = (await qwen3().encodeChat([{ role: "user", content: "hi" }], { addGenerationPrompt: true }))
      .promptTokenIds;
    const kwargs = { enable_thinking: false };
    expect(chatParsing(ctx("qwen3"), {}, [], undefined).engineFields(open)).toEqual({
      reasoningEnded: false,
      reasoningParserKwargs: { chat_template_kwargs: {} },
    });
    expect(chatParsing(ctx("qwen3"), {}, [], kwargs).engineFields([1, 151668])).toEqual({
      reasoningEnded: true,
      reasoningParserKwargs: { chat_template_kwargs: kwargs },
    });
    expect(chatParsing(ctx(), { include_reasoning: false }, [], undefined).engineFields(open)).toEqual({
      reasoningEnded: true,
    });
    expect(chatParsing(ctx(), {}, [], undefined).engineFields(open)).toEqual({});
  });
});

describe("server flags", () => {
  it("--enable-auto-tool-choice needs --tool-call-parser; an unknown parser is refused with the names", () => {
    expect(() => parserServing({ enableAutoToolChoice: true }, qwen3())).toThrow(
      "Error: --enable-auto-tool-choice requires --tool-call-parser",
    );
    expect(() => parserServing({ toolCallParser: "nope" }, qwen3())).toThrow(
      /tool_parser:'nope' which has not been registered/,
    );
  });
  it("a parser without --enable-auto-tool-choice is not used (vLLM's ParserManager)", () => {
    const serving = parserServing({ toolCallParser: "hermes" }, qwen3()).toolServing;
    expect(serving.toolParser).toBeUndefined();
    expect(() =>
      checkToolServing(toolRequestOf({ tools: [weather], tool_choice: "required" }), serving),
    ).toThrow('tool_choice="required" requires --tool-call-parser to be set');
    expect(() =>
      checkToolServing(
        toolRequestOf({
          tools: [weather],
          tool_choice: { type: "function", function: { name: "get_weather" } },
        }),
        serving,
      ),
    ).toThrow('tool_choice=function "get_weather" requires --tool-call-parser to be set');
    expect(() =>
      checkToolServing(toolRequestOf({ tools: [weather] }), {
        enableAutoToolChoice: true,
        toolParser: hermes,
      }),
    ).not.toThrow();
  });
});

describe("messages for the template", () => {
  it("assistant tool_calls arguments become objects ({} when empty); reasoning_content is read as reasoning", () => {
    const out = templateMessages([
      { role: "user", content: "x" },
      {
        role: "assistant",
        content: null,
        reasoning_content: "thought",
        tool_calls: [
          { id: "a", type: "function", function: { name: "f", arguments: '{"k": [1]}' } },
          { id: "b", type: "function", function: { name: "g", arguments: "" } },
        ],
      },
      { role: "assistant", content: "ok", tool_calls: [] },
    ] as never);
    expect(out[1]).toEqual({
      role: "assistant",
      content: "",
      reasoning: "thought",
      reasoning_content: "thought",
      tool_calls: [
        { id: "a", type: "function", function: { name: "f", arguments: { k: [1] } } },
        { id: "b", type: "function", function: { name: "g", arguments: {} } },
      ],
    });
    expect(out[2]).toEqual({ role: "assistant", content: "ok" });
  });
  it("a non-function tool call is refused with vLLM's message", () => {
    expect(() =>
      templateMessages([
        { role: "assistant", content: "", tool_calls: [{ type: "custom", custom: {} }] },
      ] as never),
    ).toThrow("chat completions only support assistant tool_calls of type 'function'.");
  });
});
