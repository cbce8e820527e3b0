// vLLM's tests/reasoning/test_qwen3_reasoning_parser.py and test_deepseekr1_reasoning_parser.py, ported:
// the same outputs and expected (reasoning, content); streaming runs token by token with the Qwen3
// tokenizer, and every case is also cut at every character position.
import { describe, expect, it } from "vitest";
import type { ReasoningSession } from "../../src/reasoning/index.js";
import { reasoningParser } from "../../src/reasoning/index.js";
import { qwen3 } from "../helpers.js";
import { characterSplits, tokenDeltas } from "./stream-helpers.js";

const tok = qwen3();

/** Streams the deltas; reasoning / content null when none was streamed, as vLLM's reconstructor. */
function streamSplit(session: ReasoningSession, deltas: readonly string[]) {
  const s = session.stream();
  let reasoning = "";
  let content = "";
  for (const d of deltas) {
    const r = s.push(d);
    reasoning += r.reasoning;
    content += r.content;
  }
  const f = s.flush();
  reasoning += f.reasoning;
  content += f.content;
  return { reasoning: reasoning === "" ? null : reasoning, content: content === "" ? null : content };
}

async function checkStreaming(
  session: ReasoningSession,
  output: string,
  reasoning: string | null,
  content: string | null,
) {
  expect(streamSplit(session, await tokenDeltas(tok, output))).toEqual({ reasoning, content });
  for (const deltas of characterSplits(output)) {
    expect(streamSplit(session, deltas)).toEqual({ reasoning, content });
  }
}

describe("qwen3 reasoning parser (vLLM test_qwen3_reasoning_parser.py)", () => {
  const session = reasoningParser("qwen3").session(tok, {});
  const TOOL_CALL_BODY =
    "<tool_call>\n<function=bash>\n<parameter=command>\ncat /etc/hosts\n</parameter>\n</function>\n</tool_call>";
  const cases: [string, string, string | null, string | null][] = [
    [
      "without_start_token",
      "This is a reasoning section</think>This is the rest",
      "This is a reasoning section",
      "This is the rest",
    ],
    [
      "without_start_token_complete_reasoning",
      "This is a reasoning section</think>",
      "This is a reasoning section",
      null,
    ],
    [
      "with_think",
      "<think>This is a reasoning section</think>This is the rest",
      "This is a reasoning section",
      "This is the rest",
    ],
    ["without_think", "This is the rest", "This is the rest", null],
    ["complete_reasoning", "<think>This is a reasoning section</think>", "This is a reasoning section", null],
    [
      "multiline_reasoning",
      "<think>This is a reasoning\nsection</think>This is the rest\nThat",
      "This is a reasoning\nsection",
      "This is the rest\nThat",
    ],
    ["only_open_tag", "<think>This is a reasoning section", "This is a reasoning section", null],
    ["truncated_no_start_token", "This is a reasoning section", "This is a reasoning section", null],
    [
      "tool_call_no_think_end",
      `I need to read the file.\n\n${TOOL_CALL_BODY}`,
      "I need to read the file.\n\n",
      TOOL_CALL_BODY,
    ],
    [
      "tool_call_with_think_no_end",
      `<think>I need to read the file.\n\n${TOOL_CALL_BODY}`,
      "I need to read the file.\n\n",
      TOOL_CALL_BODY,
    ],
  ];
  it.each(cases)("%s", (_id, output, reasoning, content) => {
    expect(session.extract(output)).toEqual({ reasoning, content });
  });
  it.each(cases)(
    "%s_stream (token by token, and cut at every character)",
    async (_id, output, reasoning, content) => {
      await checkStreaming(session, output, reasoning, content);
    },
  );

  it.each([
    [
      "start_token_grouped_with_text",
      ["<think>This is a reasoning section", "</think>", "This is the rest"],
      "This is a reasoning section",
      "This is the rest",
    ],
    [
      "end_token_grouped_with_content",
      ["reasoning section", "</think>This is the rest"],
      "reasoning section",
      "This is the rest",
    ],
    ["start_and_end_in_one_delta_no_content", ["<think>reasoning</think>"], "reasoning", null],
    [
      "no_start_end_grouped_with_content",
      ["reasoning section", "</think>content"],
      "reasoning section",
      "content",
    ],
    [
      "tool_call_implicit_reasoning_end",
      ["I need to read the file.\n\n", "<tool_call>\n<function=bash>"],
      "I need to read the file.\n\n",
      "<tool_call>\n<function=bash>",
    ],
  ] as [string, string[], string, string | null][])(
    "multi-token deltas: %s",
    (_id, deltas, reasoning, content) => {
      expect(streamSplit(session, deltas)).toEqual({ reasoning, content });
    },
  );

  it.each([
    ["thinking_disabled_plain_content", "This is plain content"],
    ["thinking_disabled_no_think_tokens", "Some output without think tokens"],
    ["thinking_disabled_with_tool_call", `I need to read the file.\n\n${TOOL_CALL_BODY}`],
  ])("enable_thinking=false: %s is all content", (_id, output) => {
    const off = reasoningParser("qwen3").session(tok, { enable_thinking: false });
    expect(off.extract(output)).toEqual({ reasoning: null, content: output });
  });

  it("is_reasoning_end on the prompt: the template's empty think block ends it, an open one does not", async () => {
    const thinkOff = await tok.encodeChat([{ role: "user", content: "hi" }], {
      addGenerationPrompt: true,
      templateVariables: { enable_thinking: false },
    });
    const thinkOn = await tok.encodeChat([{ role: "user", content: "hi" }], { addGenerationPrompt: true });
    expect(session.isReasoningEnd(thinkOff.promptTokenIds)).toBe(true);
    expect(session.isReasoningEnd(thinkOn.promptTokenIds)).toBe(false);
  });
});

describe("deepseek_r1 reasoning parser (vLLM test_deepseekr1_reasoning_parser.py)", () => {
  const session = reasoningParser("deepseek_r1").session(tok, {});
  // [id, output, non-streaming (reasoning, content), streaming (reasoning, content), is_reasoning_end]
  const cases: [string, string, [string | null, string | null], [string | null, string | null], boolean][] = [
    [
      "simple_reasoning",
      "This is a reasoning section</think>This is the rest",
      ["This is a reasoning section", "This is the rest"],
      ["This is a reasoning section", "This is the rest"],
      true,
    ],
    [
      "complete_reasoning",
      "This is a reasoning section</think>",
      ["This is a reasoning section", null],
      ["This is a reasoning section", null],
      true,
    ],
    ["no_content_token", "This is content", ["This is content", null], ["This is content", null], false],
    [
      "multiple_lines",
      "This\nThat</think>This is the rest\nThat",
      ["This\nThat", "This is the rest\nThat"],
      ["This\nThat", "This is the rest\nThat"],
      true,
    ],
    ["shortest", "</think>This is the rest", ["", "This is the rest"], [null, "This is the rest"], true],
    [
      "reasoning_with_think",
      "<think>This is a reasoning section</think>This is the rest",
      ["This is a reasoning section", "This is the rest"],
      ["This is a reasoning section", "This is the rest"],
      true,
    ],
    [
      "complete_reasoning_with_think",
      "<think>This is a reasoning section</think>",
      ["This is a reasoning section", null],
      ["This is a reasoning section", null],
      true,
    ],
    [
      "multiple_lines_with_think",
      "<think>This\nThat</think>This is the rest\nThat",
      ["This\nThat", "This is the rest\nThat"],
      ["This\nThat", "This is the rest\nThat"],
      true,
    ],
    [
      "think_no_end",
      "<think>This is a reasoning section",
      ["This is a reasoning section", null],
      ["This is a reasoning section", null],
      false,
    ],
    ["empty", "", ["", null], [null, null], false],
    [
      "new_line",
      "\n<think>This is a reasoning section</think>\nThis is the rest",
      ["This is a reasoning section", "\nThis is the rest"],
      ["\nThis is a reasoning section", "\nThis is the rest"],
      true,
    ],
  ];
  it.each(cases)("%s", async (_id, output, [reasoning, content], streamed, ended) => {
    expect(session.extract(output)).toEqual({ reasoning, content });
    if (output !== "") await checkStreaming(session, output, ...streamed);
    else expect(streamSplit(session, [])).toEqual({ reasoning: streamed[0], content: streamed[1] });
    const ids = await tok.encode(output, { addSpecialTokens: false });
    expect(session.isReasoningEnd(ids)).toBe(ended);
  });
});

describe("unknown reasoning parser", () => {
  it("is refused with vLLM's wording and the names available", () => {
    expect(() => reasoningParser("nope")).toThrow(
      /reasoning_parser_name='nope' has not been registered.*qwen3/,
    );
  });
});
