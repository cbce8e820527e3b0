// `llama3_json` (and `llama4_json`): Llama 3.x / 4 JSON tool calls, after vLLM's `Llama3JsonToolParser`
// (vllm/tool_parsers/llama_tool_parser.py): `{"name": …, "parameters" | "arguments": {…}}`, several joined
// by "; ", optionally after `<|python_tag|>`. Whole outputs: every top-level JSON object in the text is a
// call (one that is not → the whole output is content); arguments re-serialized as Python's json.dumps.
// Streaming: only an output that starts with `{` (or the python tag) is parsed as calls, as vLLM does.
import { jsonValueEnd, parsePartialJson, rawDecode } from "./json-text.js";
import type { PartialCall } from "./region-stream.js";
import { RegionStream } from "./region-stream.js";
import { pythonJsonDumps } from "./text.js";
import type { ExtractedToolCalls, ParsedToolCall, ToolParser } from "./types.js";

const BOT = "<|python_tag|>";

function extract(output: string): ExtractedToolCalls {
  const notCalled = { toolsCalled: false, toolCalls: [], content: output };
  if (!output.includes(BOT) && !output.includes("{")) return notCalled;
  const toolCalls: ParsedToolCall[] = [];
  let end = -1;
  for (let i = output.indexOf("{"); i !== -1; i = output.indexOf("{", i + 1)) {
    if (i <= end) continue; // inside an object already parsed
    const decoded = rawDecode(output.slice(i));
    if (decoded === undefined) return notCalled;
    end = i + decoded.end;
    const obj = decoded.value as Record<string, unknown>;
    if (typeof obj !== "object" || obj === null || !("name" in obj)) return notCalled;
    if (!("arguments" in obj) && !("parameters" in obj)) return notCalled;
    const args = "arguments" in obj ? obj.arguments : obj.parameters;
    toolCalls.push({ name: String(obj.name), arguments: pythonJsonDumps(args) });
  }
  return toolCalls.length > 0 ? { toolsCalled: true, toolCalls, content: null } : notCalled;
}

function parseRegion(text: string, final: boolean): PartialCall[] {
  const calls: PartialCall[] = [];
  let at = text.startsWith(BOT) ? BOT.length : 0;
  while (at < text.length) {
    const rest = text.slice(at);
    const end = jsonValueEnd(rest);
    let obj: Record<string, unknown>;
    let nameDone: boolean;
    try {
      obj = parsePartialJson(end === -1 ? rest : rest.slice(0, end)) as Record<string, unknown>;
      // The name is sent whole: known only once a parse without partial strings has it.
      nameDone =
        end !== -1 || typeof (parsePartialJson(rest, false) as Record<string, unknown>)?.name === "string";
    } catch {
      break;
    }
    if (typeof obj !== "object" || obj === null) break;
    const args = "parameters" in obj ? obj.parameters : obj.arguments;
    const complete = end !== -1 || final;
    calls.push({
      name: nameDone && typeof obj.name === "string" ? obj.name : undefined,
      arguments: args === undefined ? "" : pythonJsonDumps(args),
      complete,
    });
    if (end === -1) break;
    at += end + "; ".length;
  }
  return calls;
}

export const llama3Json: ToolParser = {
  name: "llama3_json",
  supportsRequiredAndNamed: true,
  keepSpecialTokens: false,
  extract: (output) => extract(output),
  stream: () =>
    new RegionStream({
      findStart: (text) => (text.startsWith(BOT) || text.startsWith("{") ? 0 : -1),
      holdBack: (text) => (text.length < BOT.length && BOT.startsWith(text) ? text.length : 0),
      parse: parseRegion,
      reserialized: true,
    }),
};
