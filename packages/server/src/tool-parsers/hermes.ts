// `hermes`: Hermes 2 Pro, Qwen2.5 and Qwen3 (`<tool_call>{"name": …, "arguments": {…}}</tool_call>`), after
// vLLM's `Hermes2ProToolParser` (vllm/tool_parsers/hermes_tool_parser.py).
//
// Streaming follows vLLM's rules: text before the first `<tool_call>` is content (a suffix that could be
// the start of the tag is held back); a call's name is sent (with its index, a new id and type "function")
// once `"name": "…"` is complete; its arguments are then sent as raw text fragments, the text after
// `"arguments":` as the model writes it, without the `}` that closes the call once the call's JSON is
// complete. Text after the first call is never content. vLLM re-parses the whole output on every delta;
// this one keeps its place, so a delta costs in proportion to its own length.

import { makeToolCallId, partialTagOverlap, pythonJsonDumps } from "./text.js";
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

/** The JSON nesting state of the call body read so far, advanced character by character. */
interface JsonState {
  depth: number;
  inString: boolean;
  escaped: boolean;
}

function advance(state: JsonState, text: string): number {
  // Returns the index in `text` where the outer object closed (depth back to 0), or -1.
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (state.escaped) state.escaped = false;
    else if (state.inString) {
      if (ch === 92 /* \\ */) state.escaped = true;
      else if (ch === 34 /* " */) state.inString = false;
    } else if (ch === 34) state.inString = true;
    else if (ch === 123 /* { */) state.depth++;
    else if (ch === 125 /* } */) {
      state.depth--;
      if (state.depth === 0) return i;
    }
  }
  return -1;
}

/** Index after the last non-whitespace character of `text` before `end`. */
function trimmedEnd(text: string, end: number): number {
  let i = end;
  while (i > 0 && isSpace(text.charCodeAt(i - 1))) i--;
  return i;
}

/** Python's str.strip() whitespace in ASCII, plus the Unicode spaces JSON text may carry. */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0x3000;
}

/**
 * Streaming in three phases, each costing in proportion to the delta, not to the output: content until
 * `<tool_call>` (its possible beginning held back); a call's head until its name and the start of its
 * arguments are known (the head is short: re-parsed whole, as vLLM does); then the arguments, sent as
 * they come except what may still turn out not to be theirs (trailing whitespace, a partial
 * `</tool_call>`, the brace that closes the call object), with the JSON nesting tracked per character.
 */
class HermesStream implements ToolCallStream {
  #phase: "content" | "head" | "args" | "between" = "content";
  /** Text not yet decided: held-back content, the call head, or held-back argument text. */
  #pending = "";
  #index = -1;
  #nameSent = false;
  #json: JsonState = { depth: 0, inString: false, escaped: false };
  /** The outer object closed at this index of #pending (args phase), or -1. */
  #closedAt = -1;
  /** Where the nesting scan resumes in the text being processed (args phase). */
  #scanFrom = 0;

  push(delta: string): DeltaMessage | null {
    let text = this.#pending + delta;
    // Held-back argument text was already scanned for nesting.
    this.#scanFrom = this.#pending.length;
    this.#pending = "";
    let content: string | undefined;
    const calls: DeltaToolCall[] = [];
    for (;;) {
      if (this.#phase === "content" || this.#phase === "between") {
        const start = text.indexOf(START);
        if (start === -1) {
          const hold = partialTagOverlap(text, START);
          // Text between or after calls is never content (vLLM sends content up to the first call only).
          if (this.#phase === "content" && text.length > hold)
            content = (content ?? "") + text.slice(0, text.length - hold);
          this.#pending = text.slice(text.length - hold);
          break;
        }
        if (this.#phase === "content" && start > 0) content = (content ?? "") + text.slice(0, start);
        this.#phase = "head";
        this.#index++;
        this.#nameSent = false;
        text = text.slice(start + START.length);
        continue;
      }
      if (this.#phase === "head") {
        const end = text.indexOf(END);
        const body =
          end === -1 ? text.slice(0, text.length - partialTagOverlap(text, END)) : text.slice(0, end);
        const json = body.trim();
        if (!this.#nameSent) {
          const name = NAME_RE.exec(json)?.[1];
          if (name === undefined) {
            if (end === -1) {
              this.#pending = text;
              break;
            }
            // A call without a name: vLLM stops there; so does this stream.
            this.#phase = "between";
            text = text.slice(end + END.length);
            continue;
          }
          this.#nameSent = true;
          calls.push({ index: this.#index, type: "function", id: makeToolCallId(), function: { name } });
        }
        const m = ARGS_RE.exec(text);
        // Wait for the first character of the arguments: a space after the colon may still be coming.
        const started = m !== null && trimmedEnd(text, text.length) > m.index + m[0].length;
        if (m === null || (end !== -1 && m.index > end) || (!started && end === -1)) {
          if (end === -1) {
            this.#pending = text;
            break;
          }
          this.#phase = "between";
          text = text.slice(end + END.length);
          continue;
        }
        // The arguments start here: track the body's nesting up to this point, then stream the rest.
        this.#json = { depth: 0, inString: false, escaped: false };
        advance(this.#json, text.slice(0, m.index + m[0].length));
        this.#closedAt = -1;
        this.#scanFrom = 0;
        this.#phase = "args";
        text = text.slice(m.index + m[0].length);
        continue;
      }
      // "args": text is the held-back argument text plus the delta.
      const end = text.indexOf(END);
      if (end !== -1) {
        // The call is complete: its arguments without the object's closing brace (vLLM's is_complete).
        let last = trimmedEnd(text, end);
        if (text[last - 1] === "}") last = trimmedEnd(text, last - 1);
        if (last > 0) calls.push({ index: this.#index, function: { arguments: text.slice(0, last) } });
        this.#phase = "between";
        text = text.slice(end + END.length);
        continue;
      }
      if (this.#closedAt === -1) {
        const closed = advance(this.#json, text.slice(this.#scanFrom));
        if (closed !== -1) this.#closedAt = this.#scanFrom + closed;
      }
      let sendable: number;
      if (this.#closedAt !== -1) {
        // The object closed: its arguments end before that brace; the rest waits for </tool_call>.
        sendable = trimmedEnd(text, this.#closedAt);
      } else {
        sendable = trimmedEnd(text, text.length - partialTagOverlap(text, END));
      }
      if (sendable > 0) {
        calls.push({ index: this.#index, function: { arguments: text.slice(0, sendable) } });
        if (this.#closedAt !== -1) this.#closedAt -= sendable;
      }
      this.#pending = text.slice(sendable);
      break;
    }
    if (calls.length === 0) return content === undefined ? null : { content };
    return { content: content ?? null, tool_calls: calls };
  }

  flush(): DeltaMessage | null {
    // A possible `<tool_call>` that never completed is content after all (vLLM would drop it).
    if (this.#phase !== "content" || this.#pending === "") return null;
    const content = this.#pending;
    this.#pending = "";
    return { content };
  }

  remainingArguments(): string {
    // What vLLM records for a call is the text it streamed, so nothing is ever left over.
    return "";
  }
}

export const hermes: ToolParser = {
  name: "hermes",
  supportsRequiredAndNamed: true,
  keepSpecialTokens: true,
  extract: (output) => extract(output),
  stream: () => new HermesStream(),
};
