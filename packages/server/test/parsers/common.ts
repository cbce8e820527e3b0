// vLLM's tests/tool_parsers/common_tests.py as a reusable suite: one config of model outputs per parser,
// each checked whole (extract) and streamed (token by token with the Qwen3 tokenizer, and cut at every
// character position), plus streaming = non-streaming for the single call.
import { describe, expect, it } from "vitest";
import type { ToolDefinition, ToolParser } from "../../src/tool-parsers/index.js";
import { qwen3 } from "../helpers.js";
import { characterSplits, runToolStream, type Streamed, tokenDeltas } from "./stream-helpers.js";

export interface CommonConfig {
  parser: ToolParser;
  tools?: ToolDefinition[];
  noToolCalls: string;
  singleToolCall: string;
  parallelToolCalls: string;
  variousDataTypes: string;
  emptyArguments: string;
  surroundingText: string;
  escapedStrings: string;
  malformed: string[];
  singleName?: string;
  singleArgs?: Record<string, unknown>;
  singleContent?: string | null;
  parallelNames?: string[];
  /** vLLM's xfail entries: test name → reason (kept out, with the reason, as vLLM does). */
  xfailStreaming?: Record<string, string>;
  xfailNonStreaming?: Record<string, string>;
}

interface Result {
  content: string | null;
  calls: { name: string | undefined; arguments: string; id: string | undefined }[];
}

const tok = qwen3();

function fromStream(r: Streamed): Result {
  return {
    content: r.content === "" ? null : r.content,
    calls: r.calls.map((c) => ({ name: c.name, arguments: c.arguments, id: c.id })),
  };
}

export function commonToolParserTests(cfg: CommonConfig): void {
  const tools = cfg.tools ?? [];
  const whole = (text: string): Result => {
    const r = cfg.parser.extract(text, tools);
    return {
      content: r.content,
      calls: r.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments, id: c.id })),
    };
  };
  const streamed = async (text: string): Promise<Result> =>
    fromStream(runToolStream(cfg.parser.stream(tools), await tokenDeltas(tok, text)));

  for (const mode of ["non-streaming", "streaming"] as const) {
    const run = (text: string) => (mode === "streaming" ? streamed(text) : Promise.resolve(whole(text)));
    const xfail = (mode === "streaming" ? cfg.xfailStreaming : cfg.xfailNonStreaming) ?? {};
    const test = (name: string, fn: () => Promise<void>) =>
      name in xfail ? it.skip(`${name} (vLLM xfail: ${xfail[name]})`, fn) : it(name, fn);

    describe(`${cfg.parser.name} common tests, ${mode} (vLLM common_tests.py)`, () => {
      test("test_no_tool_calls", async () => {
        const r = await run(cfg.noToolCalls);
        expect(r.content).toBe(cfg.noToolCalls);
        expect(r.calls).toEqual([]);
      });
      test("test_single_tool_call_simple_args", async () => {
        const r = await run(cfg.singleToolCall);
        if (cfg.singleContent !== undefined) expect(r.content).toBe(cfg.singleContent);
        expect(r.calls).toHaveLength(1);
        expect(r.calls[0]!.name).toBe(cfg.singleName ?? "get_weather");
        const args = JSON.parse(r.calls[0]!.arguments);
        for (const [k, v] of Object.entries(cfg.singleArgs ?? { city: "Tokyo" })) expect(args[k]).toEqual(v);
      });
      test("test_parallel_tool_calls", async () => {
        const r = await run(cfg.parallelToolCalls);
        const names = cfg.parallelNames ?? ["get_weather", "get_time"];
        expect(r.calls.map((c) => c.name)).toEqual(names);
        if (mode === "streaming") expect(new Set(r.calls.map((c) => c.id)).size).toBe(names.length);
      });
      test("test_various_data_types", async () => {
        const r = await run(cfg.variousDataTypes);
        expect(r.calls).toHaveLength(1);
        const args = JSON.parse(r.calls[0]!.arguments);
        expect(args).toMatchObject({
          string_field: "hello",
          int_field: 42,
          float_field: 3.14,
          bool_field: true,
          null_field: null,
          array_field: ["a", "b", "c"],
          object_field: { nested: "value" },
          empty_array: [],
          empty_object: {},
        });
      });
      test("test_empty_arguments", async () => {
        const r = await run(cfg.emptyArguments);
        expect(r.calls).toHaveLength(1);
        expect(r.calls[0]!.arguments).toBe("{}");
      });
      test("test_surrounding_text", async () => {
        const r = await run(cfg.surroundingText);
        expect(r.calls.length).toBeGreaterThanOrEqual(1);
      });
      test("test_escaped_strings", async () => {
        const r = await run(cfg.escapedStrings);
        expect(r.calls).toHaveLength(1);
        expect(r.calls[0]!.arguments.length).toBeGreaterThan(0);
        JSON.parse(r.calls[0]!.arguments);
      });
      test("test_malformed_input (no exception)", async () => {
        for (const text of cfg.malformed) await run(text);
      });
    });
  }

  describe(`${cfg.parser.name} streaming reconstruction`, () => {
    it("test_streaming_reconstruction: streamed content and calls equal the whole-output ones", async () => {
      const w = whole(cfg.singleToolCall);
      const s = await streamed(cfg.singleToolCall);
      expect(s.content).toBe(w.content);
      expect(s.calls.map((c) => [c.name, c.arguments])).toEqual(w.calls.map((c) => [c.name, c.arguments]));
    });
    it("every character cut of the single and parallel outputs streams the same calls", () => {
      for (const text of [cfg.singleToolCall, cfg.parallelToolCalls, cfg.surroundingText]) {
        const w = whole(text);
        for (const deltas of characterSplits(text)) {
          const s = fromStream(runToolStream(cfg.parser.stream(tools), deltas));
          expect(s.calls.map((c) => [c.name, c.arguments])).toEqual(
            w.calls.map((c) => [c.name, c.arguments]),
          );
          expect(s.content ?? "").not.toMatch(/tool|TOOL_CALLS|function=/);
        }
      }
    });
  });
}
