// `hermes`: Hermes 2 Pro, Qwen2.5 and Qwen3 (`<tool_call>{"name": …, "arguments": {…}}</tool_call>`), after
// vLLM's `Hermes2ProToolParser` (vllm/tool_parsers/hermes_tool_parser.py).
//
// Streaming follows vLLM's rules: text before the first `<tool_call>` is content (a suffix that could be
// the start of the tag is held back); a call's name is sent (with its index, a new id and type "function")
// once `"name": "…"` is complete; its arguments are then sent as raw text fragments, the text after
// `"arguments":` as the model writes it, without the `}` that closes the call once the call's JSON is
// complete. Text after the first call is never content. vLLM re-parses the whole output on every delta;
// this one keeps its place and only looks at the call being written, so a delta costs in proportion to
// the open call, not to the whole output.

import { isCompleteJson, makeToolCallId, partialTagOverlap, pythonJsonDumps } from "./text.js";
import type {
  DeltaMessage,
  DeltaToolCall,
  ExtractedToolCalls,
  ParsedToolCall,
  ToolCallStream,
  ToolParser,
} from "./types.js";

const START = "<tool_call>";
const END = "</tool_call>";
const CALL_RE = /<tool_call>([\s\S]*?)<\/tool_call>|<tool_call>([\s\S]*)/g;
const NAME_RE = /"name"\s*:\s*"([^"]+)"/;
const ARGS_RE = /"arguments"\s*:\s*/;

function extract(output: string): ExtractedToolCalls {
  if (!output.includes(START)) return { toolsCalled: false, toolCalls: [], content: output };
  try {
    const toolCalls: ParsedToolCall[] = [];
    for (const match of output.matchAll(CALL_RE)) {
      const call = JSON.parse((match[1] ?? match[2]) as string) as Record<string, unknown>;
      if (typeof call.name !== "string" || !("arguments" in call)) throw new Error("not a tool call");
      toolCalls.push({ name: call.name, arguments: pythonJsonDumps(call.arguments) });
    }
    const content = output.slice(0, output.indexOf(START));
    return { toolsCalled: true, toolCalls, content: content === "" ? null : content };
  } catch {
    // vLLM: "Error in extracting tool call from response." → the whole output is content.
    return { toolsCalled: false, toolCalls: [], content: output };
  }
}

/** The arguments text of a call's JSON (vLLM's `_extract_tool_args`). */
function argumentsText(json: string, complete: boolean): string | null {
  const m = ARGS_RE.exec(json);
  if (m === null) return null;
  let raw = json.slice(m.index + m[0].length);
  if (complete) {
    raw = raw.trimEnd();
    if (raw.endsWith("}")) raw = raw.slice(0, -1).trimEnd();
  }
  return raw;
}

class HermesStream implements ToolCallStream {
  #text = "";
  /** Content sent so far ends here; once a call started, content is over. */
  #contentEnd = 0;
  #inCalls = false;
  /** Where the body of the call being parsed starts, or -1 between calls. */
  #bodyStart = -1;
  /** Where to look for the next `<tool_call>` between calls. */
  #searchFrom = 0;
  #index = -1;
  #nameSent = false;
  #argsSent = "";
  /** The last call's arguments as parsed so far (vLLM's prev_tool_call_arr[-1]["arguments"]). */
  #lastArgs = "";

  push(delta: string): DeltaMessage | null {
    this.#text += delta;
    const text = this.#text;
    let content: string | undefined;
    if (!this.#inCalls) {
      const start = text.indexOf(START, Math.max(0, this.#contentEnd - START.length));
      const sendable = start === -1 ? text.length - partialTagOverlap(text, START) : start;
      if (sendable > this.#contentEnd) {
        content = text.slice(this.#contentEnd, sendable);
        this.#contentEnd = sendable;
      }
      if (start === -1) return content === undefined ? null : { content };
      this.#inCalls = true;
      this.#searchFrom = start;
    }
    const calls: DeltaToolCall[] = [];
    for (;;) {
      if (this.#bodyStart === -1) {
        const start = text.indexOf(START, this.#searchFrom);
        if (start === -1) break;
        this.#bodyStart = start + START.length;
        this.#index++;
        this.#nameSent = false;
        this.#argsSent = "";
      }
      const end = text.indexOf(END, this.#bodyStart);
      let json: string;
      let complete: boolean;
      if (end !== -1) {
        json = text.slice(this.#bodyStart, end).trim();
        complete = true;
      } else {
        let raw = text.slice(this.#bodyStart);
        const overlap = partialTagOverlap(raw, END);
        if (overlap > 0) raw = raw.slice(0, -overlap);
        json = raw.trim();
        // Valid JSON without the closing tag: the body is complete, the tag has not arrived yet.
        complete = json.endsWith("}") && isCompleteJson(json);
      }
      if (!this.#nameSent) {
        const name = NAME_RE.exec(json)?.[1];
        if (name === undefined) break; // later calls wait for this one's name
        this.#nameSent = true;
        calls.push({ index: this.#index, type: "function", id: makeToolCallId(), function: { name } });
        this.#lastArgs = "";
      }
      const args = argumentsText(json, complete);
      if (args !== null && args.length > this.#argsSent.length) {
        calls.push({ index: this.#index, function: { arguments: args.slice(this.#argsSent.length) } });
        this.#argsSent = args;
        this.#lastArgs = args;
      }
      if (end === -1) break;
      this.#bodyStart = -1;
      this.#searchFrom = end + END.length;
    }
    if (content === undefined && calls.length === 0) return null;
    return { content: content ?? null, tool_calls: calls };
  }

  remainingArguments(): string {
    // The arguments recorded are exactly the text streamed (vLLM stores the raw text), so nothing remains.
    return this.#lastArgs.startsWith(this.#argsSent) ? this.#lastArgs.slice(this.#argsSent.length) : "";
  }
}

export const hermes: ToolParser = {
  name: "hermes",
  supportsRequiredAndNamed: true,
  keepSpecialTokens: true,
  extract: (output) => extract(output),
  stream: () => new HermesStream(),
};
