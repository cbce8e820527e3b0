// `mistral`: Mistral models' `[TOOL_CALLS]` format, after vLLM's `MistralToolParser`
// (vllm/tool_parsers/mistral_tool_parser.py → vllm/parser/mistral.py), in both tokenizer generations:
// - v11+ (the vocabulary has `[ARGS]`): `[TOOL_CALLS]name[ARGS]{…}` or `[TOOL_CALLS]name{…}`, one marker per
//   call; the arguments are the first JSON value's text (anything after it is dropped, gh#48975), no
//   arguments = "{}";
// - older: `[TOOL_CALLS] [{"name": …, "arguments": {…}}, …]` once; arguments re-serialized as Python's
//   json.dumps writes them.
// Call ids are Mistral's 9 alphanumeric characters. `tool_choice` "required" / named go through this parser
// too (vLLM: supports_required_and_named = False, Mistral enforces them with its own grammar).
import { parsePartialJson, rawDecode } from "./json-text.js";
import type { PartialCall } from "./region-stream.js";
import { RegionStream } from "./region-stream.js";
import { partialTagOverlap, pythonJsonDumps } from "./text.js";
import type { ExtractedToolCalls, ParsedToolCall, ToolParser } from "./types.js";

const BOT = "[TOOL_CALLS]";
const ARGS = "[ARGS]";
const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `MistralToolCall.generate_random_id`: 9 alphanumeric characters. */
export function mistralToolCallId(): string {
  const bytes = new Uint8Array(9);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join("");
}

const withIds = (calls: { name: string; arguments: string }[]): ParsedToolCall[] =>
  calls.map((c) => ({ ...c, id: mistralToolCallId() }));

/** v11+: `name[ARGS]{…}` / `name{…}` → name and the arguments' JSON text. */
function v11Call(part: string): { name: string; args: string; nameDone: boolean; complete: boolean } {
  const argsAt = part.indexOf(ARGS);
  const braceAt = part.indexOf("{");
  let nameEnd: number;
  let argsStart: number;
  if (argsAt !== -1 && (braceAt === -1 || argsAt < braceAt)) {
    nameEnd = argsAt;
    argsStart = argsAt + ARGS.length;
  } else if (braceAt !== -1) {
    nameEnd = braceAt;
    argsStart = braceAt;
  } else {
    return { name: part.trim(), args: "", nameDone: false, complete: false };
  }
  const raw = part.slice(argsStart).trim();
  const decoded = rawDecode(raw);
  return {
    name: part.slice(0, nameEnd).trim(),
    args: decoded ? raw.slice(0, decoded.end) : raw,
    nameDone: true,
    complete: decoded !== undefined,
  };
}

function extractV11(output: string): ExtractedToolCalls {
  const parts = output.split(BOT);
  if (parts.length === 1) return { toolsCalled: false, toolCalls: [], content: output };
  const content = parts[0] as string;
  const calls = parts.slice(1).map((part) => {
    const c = v11Call(part);
    return { name: c.name, arguments: c.args === "" ? "{}" : c.args };
  });
  return { toolsCalled: true, toolCalls: withIds(calls), content: content.trim() === "" ? null : content };
}

function extractPreV11(output: string): ExtractedToolCalls {
  const parts = output.split(BOT);
  if (parts.length === 1) return { toolsCalled: false, toolCalls: [], content: output };
  // vLLM raises ("Only one BOT token should have been outputted"); here the output stays content.
  if (parts.length > 2) return { toolsCalled: false, toolCalls: [], content: output };
  const content = parts[0] as string;
  const raw = (parts[1] as string).trim();
  let list: unknown = rawDecode(raw)?.value;
  if (list === undefined) {
    // vLLM's fallback: the first `[{…}]` span (regex `\[{.*}\]`, DOTALL, greedy).
    const m = /\[\{[\s\S]*\}\]/.exec(raw);
    try {
      list = m ? JSON.parse(m[0]) : undefined;
    } catch {
      list = undefined;
    }
  }
  if (!Array.isArray(list)) return { toolsCalled: false, toolCalls: [], content: raw };
  const calls = list.map((c: Record<string, unknown>) => ({
    name: String(c.name),
    arguments: pythonJsonDumps(c.arguments ?? {}),
  }));
  return { toolsCalled: true, toolCalls: withIds(calls), content: content.trim() === "" ? null : content };
}

function parseV11Region(region: string, final: boolean): PartialCall[] {
  const parts = region.split(BOT).slice(1);
  return parts.map((part, i) => {
    const last = i === parts.length - 1;
    // A `[TOOL_CALLS` still arriving at the end belongs to the next call, not to these arguments.
    const text = last && !final ? part.slice(0, part.length - partialTagOverlap(part, BOT)) : part;
    const c = v11Call(text);
    const done = !last || final;
    return {
      name: c.nameDone || done ? c.name : undefined,
      arguments: done && c.args === "" ? "{}" : c.args,
      complete: c.complete || done,
    };
  });
}

function parsePreV11Region(region: string, final: boolean): PartialCall[] {
  const raw = region.slice(BOT.length).trim();
  if (raw === "") return [];
  let list: unknown;
  try {
    list = parsePartialJson(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(list)) return [];
  const complete = final || rawDecode(raw) !== undefined;
  return list.map((c: Record<string, unknown>, i) => {
    const name = typeof c?.name === "string" ? c.name : undefined;
    const callDone = complete || i < list.length - 1;
    // The name only once its string is closed: parse again without partial strings.
    let nameDone = callDone;
    if (!nameDone && name !== undefined) {
      try {
        const strict = parsePartialJson(raw, false) as Record<string, unknown>[];
        nameDone = typeof strict[i]?.name === "string";
      } catch {
        nameDone = false;
      }
    }
    return {
      name: nameDone ? name : undefined,
      arguments: c?.arguments === undefined ? (callDone ? "{}" : "") : pythonJsonDumps(c.arguments),
      complete: callDone,
    };
  });
}

function mistralParser(v11: boolean): ToolParser {
  return {
    name: "mistral",
    supportsRequiredAndNamed: false,
    keepSpecialTokens: true,
    extract: (output) => (v11 ? extractV11(output) : extractPreV11(output)),
    stream: () =>
      new RegionStream({
        findStart: (text) => text.indexOf(BOT),
        holdBack: (text) => partialTagOverlap(text, BOT),
        parse: v11 ? parseV11Region : parsePreV11Region,
        reserialized: !v11,
        makeId: mistralToolCallId,
      }),
    forVocabulary: (vocab) => mistralParser(vocab.tokenToId(ARGS) !== undefined),
  };
}

/** Registered as v11+ (current Mistral models); `forVocabulary` picks the older format without `[ARGS]`. */
export const mistral: ToolParser = mistralParser(true);
export const mistralPreV11: ToolParser = mistralParser(false);
