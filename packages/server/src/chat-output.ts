// The response side of tool calling and reasoning: a generated text → (reasoning, content, tool calls),
// whole or delta by delta, after vLLM's `DelegatingParser.parse` / `parse_delta`
// (vllm/parser/abstract_parser.py), the forced-choice helpers of vllm/tool_parsers/streaming.py, and the
// message / finish-reason rules of `OpenAIServingChat` (vllm/entrypoints/openai/chat_completion/serving.py).
import { Allow, parse as parsePartialJson } from "partial-json";
import type { ReasoningSession, ReasoningStream } from "./reasoning/index.js";
import type { ToolChoice, ToolRequest } from "./tool-calls.js";
import type {
  DeltaMessage,
  DeltaToolCall,
  ParsedToolCall,
  ToolCallStream,
  ToolParser,
} from "./tool-parsers/index.js";
import { makeToolCallId, pythonJsonDumps } from "./tool-parsers/text.js";

export interface ChatOutputConfig {
  reasoning: ReasoningSession | undefined;
  /** Present only with `--enable-auto-tool-choice` (vLLM's ParserManager). */
  toolParser: ToolParser | undefined;
  request: ToolRequest;
  includeReasoning: boolean;
}

export interface ParsedOutput {
  reasoning: string | null;
  content: string | null;
  /** null: the output was not parsed for calls (vLLM's `None`); [] parsed, none found. */
  toolCalls: ParsedToolCall[] | null;
}

/** Whether this request's output goes through a parser at all (vLLM: `parser is not None`). */
export function hasOutputParser(cfg: ChatOutputConfig): boolean {
  return cfg.reasoning !== undefined || cfg.toolParser !== undefined;
}

const isNamed = (c: ToolChoice): c is { name: string } => typeof c === "object";
const blank = (s: string | null) => s === null || s.trim() === "";

/** `DelegatingParser._extract_tool_calls`: tool calls from the answer (the text after any reasoning). */
function extractToolCalls(
  cfg: ChatOutputConfig,
  content: string | null,
): [ParsedToolCall[] | null, string | null] {
  const parser = cfg.toolParser;
  const choice = cfg.request.toolChoice;
  if (parser === undefined || choice === "none") return [[], content];
  if (isNamed(choice) && parser.supportsRequiredAndNamed) {
    // The output was constrained to the function's arguments object.
    if (blank(content)) return [[], null];
    return [[{ name: choice.name, arguments: content as string }], null];
  }
  if (choice === "required" && parser.supportsRequiredAndNamed) {
    // The output was constrained to `[{"name": …, "parameters": {…}}, …]` (pydantic list[FunctionDefinition]).
    try {
      const list = JSON.parse(content ?? "") as unknown;
      if (!Array.isArray(list)) return [[], null];
      const calls: ParsedToolCall[] = [];
      for (const item of list) {
        const f = item as Record<string, unknown>;
        if (typeof f !== "object" || f === null || typeof f.name !== "string") return [[], null];
        const params = f.parameters ?? null;
        if (params !== null && (typeof params !== "object" || Array.isArray(params))) return [[], null];
        calls.push({ name: f.name, arguments: pythonJsonDumps(params) });
      }
      return [calls, null];
    } catch {
      return [[], null];
    }
  }
  // "auto" (and required/named for parsers that do not support the JSON path).
  const info = parser.extract(content ?? "", cfg.request.tools ?? []);
  if (info.toolsCalled) return [info.toolCalls, blank(info.content) ? null : info.content];
  if ((choice === "required" || isNamed(choice)) && blank(content)) return [[], null];
  return [null, content];
}

/** `DelegatingParser.parse`: reasoning first, then tool calls from what is left. */
export function parseOutput(cfg: ChatOutputConfig, text: string): ParsedOutput {
  const split = cfg.reasoning ? cfg.reasoning.extract(text) : { reasoning: null, content: text };
  const [toolCalls, content] = extractToolCalls(cfg, split.content);
  return { reasoning: cfg.includeReasoning ? split.reasoning : null, content, toolCalls };
}

export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  refusal: null;
  annotations: null;
  audio: null;
  function_call: null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  reasoning: string | null;
}

/**
 * `chat_completion_full_generator`'s message and finish reason: tool calls appear for a forced choice
 * ("required" / named, content "" rather than null) or for "auto" when the parser found some; the finish
 * reason is "tool_calls" when "auto" called tools or "required" stopped normally (a named call keeps
 * "stop", as OpenAI does); `parallel_tool_calls: false` keeps the first call only.
 */
export function assistantMessage(
  cfg: ChatOutputConfig,
  parsed: ParsedOutput,
  finishReason: string,
): { message: AssistantMessage; finishReason: string } {
  const choice = cfg.request.toolChoice;
  const base = {
    role: "assistant" as const,
    refusal: null,
    annotations: null,
    audio: null,
    function_call: null,
  };
  const withCalls = (calls: ParsedToolCall[]) =>
    calls.map((c) => ({
      id: c.id ?? makeToolCallId(),
      type: "function" as const,
      function: { name: c.name, arguments: c.arguments },
    }));
  let message: AssistantMessage;
  let autoCalled = false;
  if (choice === "required" || isNamed(choice)) {
    message = {
      ...base,
      content: parsed.content || "",
      tool_calls: withCalls(parsed.toolCalls ?? []),
      reasoning: parsed.reasoning,
    };
  } else if (choice === "auto" && cfg.toolParser !== undefined && (parsed.toolCalls?.length ?? 0) > 0) {
    autoCalled = true;
    message = {
      ...base,
      content: parsed.content,
      tool_calls: withCalls(parsed.toolCalls ?? []),
      reasoning: parsed.reasoning,
    };
  } else {
    message = { ...base, content: parsed.content, reasoning: parsed.reasoning };
  }
  if (message.tool_calls !== undefined) {
    if (!cfg.request.parallelToolCalls) message.tool_calls = message.tool_calls.slice(0, 1);
    if (message.tool_calls.length === 0) delete message.tool_calls; // vLLM's serializer drops an empty list
  }
  const toolCallsFinish = autoCalled || (choice === "required" && finishReason === "stop");
  return { message, finishReason: toolCallsFinish ? "tool_calls" : finishReason };
}

// ---- streaming ----------------------------------------------------------------------------------------

/** The brackets/string state of a JSON prefix (vLLM's `_bracket_level_state`). */
function bracketState(s: string): { level: number; inString: boolean; escaped: boolean } {
  let level = 0;
  let inString = false;
  let escaped = false;
  for (const ch of s) {
    if (escaped) {
      escaped = false;
      continue;
    }
    if (inString && ch === "\\") {
      escaped = true;
      continue;
    }
    if (ch === '"') {
      inString = !inString;
      continue;
    }
    if (!inString) {
      if (ch === "{") level++;
      else if (ch === "}") level--;
    }
  }
  return { level, inString, escaped };
}

/**
 * vLLM's `filter_delta_text`: the part of a delta of the "required" array that belongs to the current
 * call object (the `,` and `]` between calls cut), and whether it closed a call.
 */
function filterDeltaText(delta: string, previous: string): [string, boolean] {
  let { level, inString, escaped } = bracketState(previous);
  let out = "";
  let passedZero = false;
  for (const ch of delta) {
    if (escaped) escaped = false;
    else if (inString) {
      if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") {
      level++;
      passedZero = level === 0;
    } else if (ch === "}") {
      level--;
      passedZero = level === 0;
    }
    if (level !== 0) out += ch;
    else if (!inString && ch === ",") break;
  }
  return [out, passedZero];
}

/** `extract_named_tool_call_streaming`: every delta is arguments text of call 0, the first with id and name. */
class NamedCallStream implements ToolCallStream {
  #nameSent = false;
  constructor(readonly name: string) {}
  push(delta: string): DeltaMessage {
    if (this.#nameSent) return { tool_calls: [{ index: 0, function: { arguments: delta } }] };
    this.#nameSent = true;
    return {
      tool_calls: [
        { index: 0, id: makeToolCallId(), type: "function", function: { name: this.name, arguments: delta } },
      ],
    };
  }
  remainingArguments(): string {
    return "";
  }
}

/**
 * `extract_required_tool_call_streaming`: calls out of the growing `[{"name": …, "parameters": …}]` text.
 * vLLM's algorithm assumes a delta does not span the end of one call and the start of the next (it loses
 * the next call's name when one does, which a multi-token delta can); so each delta is fed in pieces
 * that end at every `}` or `,`, and the pieces' outputs are joined.
 */
class RequiredCallStream implements ToolCallStream {
  #previous = "";
  #nameReturned = false;

  push(delta: string): DeltaMessage | null {
    const calls: DeltaToolCall[] = [];
    let from = 0;
    for (let i = 0; i < delta.length; i++) {
      const c = delta[i];
      if (c !== "}" && c !== "," && i !== delta.length - 1) continue;
      for (const call of this.#step(delta.slice(from, i + 1))?.tool_calls ?? []) {
        const last = calls[calls.length - 1];
        // Consecutive argument fragments of one call travel as one.
        if (last && last.index === call.index && call.id === undefined && last.function && call.function) {
          last.function.arguments = (last.function.arguments ?? "") + (call.function.arguments ?? "");
        } else calls.push(call);
      }
      from = i + 1;
    }
    return calls.length === 0 ? null : { tool_calls: calls };
  }

  #step(delta: string): DeltaMessage | null {
    const previous = this.#previous;
    const current = previous + delta;
    this.#previous = current;
    if (current === "") return null;
    let obj: unknown;
    try {
      obj = parsePartialJson(current, Allow.ALL);
    } catch {
      obj = undefined;
    }
    if (!Array.isArray(obj) || obj.length === 0) {
      this.#nameReturned = false;
      return null;
    }
    const [, finishesPrevious] = filterDeltaText(delta, previous);
    let call = obj[obj.length - 1] as Record<string, unknown>;
    const has = (o: Record<string, unknown>, k: string) => typeof o === "object" && o !== null && k in o;
    if (!finishesPrevious && (!has(call, "name") || !has(call, "parameters"))) {
      this.#nameReturned = false;
      return null;
    }
    if (!this.#nameReturned) {
      const at = current.lastIndexOf('"parameters":');
      let args = "";
      if (at !== -1) {
        let start = at + '"parameters":'.length;
        while (start < current.length && /\s/.test(current[start] as string)) start++;
        [args] = filterDeltaText(current.slice(start), current.slice(0, start));
      }
      if (finishesPrevious && !has(call, "parameters")) call = obj[obj.length - 2] as Record<string, unknown>;
      this.#nameReturned = true;
      return {
        tool_calls: [
          {
            index: obj.length - 1,
            id: makeToolCallId(),
            type: "function",
            function: { name: String(call.name), arguments: args },
          },
        ],
      };
    }
    const [text] = filterDeltaText(delta, previous);
    if (text === "") return null;
    // vLLM sets `name=None` explicitly here, so its JSON carries `"name": null`.
    return { tool_calls: [{ index: obj.length - 1, function: { name: null, arguments: text } as never }] };
  }
  remainingArguments(): string {
    return "";
  }
}

/** Tool choice "none": the answer is content as it comes. */
class ContentStream implements ToolCallStream {
  push(delta: string): DeltaMessage | null {
    return delta === "" ? null : { content: delta };
  }
  remainingArguments(): string {
    return "";
  }
}

function toolStream(cfg: ChatOutputConfig): ToolCallStream | undefined {
  const parser = cfg.toolParser;
  if (parser === undefined) return undefined;
  const choice = cfg.request.toolChoice;
  if (choice === "none") return new ContentStream();
  if (isNamed(choice) && parser.supportsRequiredAndNamed) return new NamedCallStream(choice.name);
  if (choice === "required" && parser.supportsRequiredAndNamed) return new RequiredCallStream();
  return parser.stream(cfg.request.tools ?? []);
}

function merge(into: DeltaMessage | null, add: DeltaMessage | null): DeltaMessage | null {
  if (add === null) return into;
  if (into === null) return { ...add };
  if (add.content) into.content = (into.content ?? "") + add.content;
  if (add.reasoning) into.reasoning = (into.reasoning ?? "") + add.reasoning;
  if (add.tool_calls && add.tool_calls.length > 0)
    into.tool_calls = [...(into.tool_calls ?? []), ...add.tool_calls];
  return into;
}

/** Drops empty fields; null when nothing is left to send. */
function normalize(m: DeltaMessage | null): DeltaMessage | null {
  if (m === null) return null;
  const out: DeltaMessage = {};
  if (m.reasoning) out.reasoning = m.reasoning;
  if (m.content) out.content = m.content;
  if (m.tool_calls && m.tool_calls.length > 0) out.tool_calls = m.tool_calls;
  return out.reasoning === undefined && out.content === undefined && out.tool_calls === undefined
    ? null
    : out;
}

/**
 * `DelegatingParser.parse_delta` for one streamed choice: the reasoning parser sees every delta until the
 * reasoning ends (or from the start, unless the prompt already ended it); then the answer goes to the tool
 * phase: content as is (`tool_choice` "none" or no tool parser), the forced-choice JSON helpers, or the
 * model's parser. The last delta appends the arguments parsed but not yet streamed and releases any text
 * held back as a possible marker.
 */
export class ChatDeltaParser {
  readonly #cfg: ChatOutputConfig;
  readonly #reasoning: ReasoningStream | undefined;
  readonly #tools: ToolCallStream | undefined;
  #inReasoning: boolean;
  /** Some delta carried tool calls (vLLM's `tools_streamed`). */
  toolsStreamed = false;

  constructor(cfg: ChatOutputConfig, promptTokenIds: readonly number[]) {
    this.#cfg = cfg;
    this.#inReasoning = cfg.reasoning !== undefined && !cfg.reasoning.isReasoningEnd(promptTokenIds);
    this.#reasoning = this.#inReasoning ? cfg.reasoning?.stream() : undefined;
    this.#tools = toolStream(cfg);
  }

  #answer(text: string): DeltaMessage | null {
    if (this.#tools === undefined) return text === "" ? null : { content: text };
    return this.#tools.push(text);
  }

  push(text: string, finished: boolean): DeltaMessage | null {
    let message: DeltaMessage | null = null;
    let answer = text;
    if (this.#reasoning) {
      // Still fed after the reasoning ended: it may hold back (and Qwen3's drops) a stray `</think>`.
      const r = this.#reasoning.push(text);
      const f = finished ? this.#reasoning.flush() : undefined;
      if (this.#inReasoning) message = { reasoning: r.reasoning + (f?.reasoning ?? "") };
      answer = r.content + (f?.content ?? "");
      if (r.ended) this.#inReasoning = false;
    }
    if (!this.#inReasoning) message = merge(message, this.#answer(answer));
    if (finished && this.#tools !== undefined) {
      message = merge(message, this.#tools.flush?.() ?? null);
      const calls = message?.tool_calls;
      const last = calls?.[calls.length - 1];
      const remaining = this.#tools.remainingArguments();
      if (last?.function && remaining !== "")
        last.function.arguments = (last.function.arguments ?? "") + remaining;
    }
    if (message?.tool_calls?.length) this.toolsStreamed = true;
    if (message !== null && !this.#cfg.includeReasoning) message.reasoning = null;
    message = normalize(message);
    if (message?.tool_calls && !this.#cfg.request.parallelToolCalls) {
      // `maybe_filter_parallel_tool_calls`: only call 0's deltas.
      message.tool_calls = message.tool_calls.filter((c: DeltaToolCall) => c.index === 0);
      message = normalize(message);
    }
    return message;
  }

  /** The streamed finish reason: "tool_calls" once calls were streamed, unless a function was named. */
  finishReason(engineReason: string): string {
    return this.toolsStreamed && !isNamed(this.#cfg.request.toolChoice) ? "tool_calls" : engineReason;
  }
}
