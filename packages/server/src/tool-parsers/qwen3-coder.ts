// `qwen3_coder` (also registered as `qwen3_xml`): Qwen3-Coder's XML tool calls, after vLLM's Qwen3 parser
// engine (vllm/tool_parsers/qwen3_engine_tool_parser.py → vllm/parser/qwen3.py `_qwen3_arg_converter`):
//   <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n…</function>\n</tool_call>
// One leading and one trailing newline of a value are the template's; values are coerced to the tool's
// schema types (`_fix_arg_types`: without a schema they stay strings); arguments are JSON as Python's
// json.dumps writes it. A `<function=` without `<tool_call>` is a call too. Streaming sends a call's
// arguments parameter by parameter as each closes, so what is sent is never taken back.

import type { PartialCall } from "./region-stream.js";
import { RegionStream } from "./region-stream.js";
import { coerceToSchemaType, schemaTypes, toolProperties } from "./schema-types.js";
import { partialTagOverlap, pythonJsonDumps } from "./text.js";
import type { ExtractedToolCalls, ToolDefinition, ToolParser } from "./types.js";

const TOOL_START = "<tool_call>";
const FUNC_PREFIX = "<function=";
const FUNC_END = "</function>";
const PARAM_RE = /<\s*parameter\s*=\s*([^>]*)>([\s\S]*?)(?:<\s*\/\s*parameter\s*>|(?=<\s*parameter\s*=))/g;
const PARTIAL_PARAM_RE = /<\s*parameter\s*=\s*([^>]+)>([\s\S]*)$/;

function trimWrappingNewlines(value: string): string {
  let v = value.startsWith("\n") ? value.slice(1) : value;
  if (v.endsWith("\n")) v = v.slice(0, -1);
  return v;
}

/** The parameters of one function body as [name, raw value]; `closedOnly` leaves out an unclosed last one. */
function parameters(body: string, closedOnly: boolean): [string, string][] {
  const out: [string, string][] = [];
  let consumedTo = 0;
  for (const m of body.matchAll(PARAM_RE)) {
    out.push([m[1] as string, trimWrappingNewlines(m[2] as string)]);
    consumedTo = (m.index ?? 0) + m[0].length;
  }
  if (!closedOnly) {
    const m = PARTIAL_PARAM_RE.exec(body.slice(consumedTo));
    if (m?.[1]) out.push([m[1], trimWrappingNewlines(m[2] as string)]);
  }
  return out;
}

function argumentsJson(
  params: [string, string][],
  name: string,
  tools: readonly ToolDefinition[],
): Record<string, unknown> {
  const props = toolProperties(tools, name);
  const args: Record<string, unknown> = {};
  for (const [key, raw] of params) {
    args[key] = key in props ? coerceToSchemaType(raw, schemaTypes(props[key])) : raw;
  }
  return args;
}

interface RawCall {
  name: string | undefined;
  body: string;
  closed: boolean;
}

/** The function calls in the text from `from` on: each `<function=NAME>` up to `</function>`. */
function rawCalls(text: string, from: number): RawCall[] {
  const calls: RawCall[] = [];
  let at = text.indexOf(FUNC_PREFIX, from);
  while (at !== -1) {
    const nameEnd = text.indexOf(">", at + FUNC_PREFIX.length);
    const end = text.indexOf(FUNC_END, at);
    if (nameEnd === -1 || (end !== -1 && end < nameEnd)) {
      // Malformed (`</function>` before the name's `>`) or the name still arriving.
      calls.push({ name: undefined, body: "", closed: end !== -1 });
      if (end === -1) break;
      at = text.indexOf(FUNC_PREFIX, end);
      continue;
    }
    const name = text.slice(at + FUNC_PREFIX.length, nameEnd).trim();
    const body = text.slice(nameEnd + 1, end === -1 ? text.length : end);
    calls.push({ name, body, closed: end !== -1 });
    if (end === -1) break;
    at = text.indexOf(FUNC_PREFIX, end + FUNC_END.length);
  }
  return calls;
}

function regionStart(text: string): number {
  const tool = text.indexOf(TOOL_START);
  const func = text.indexOf(FUNC_PREFIX);
  if (tool === -1) return func;
  return func === -1 ? tool : Math.min(tool, func);
}

function extract(output: string, tools: readonly ToolDefinition[]): ExtractedToolCalls {
  const start = regionStart(output);
  if (start === -1) return { toolsCalled: false, toolCalls: [], content: output };
  const toolCalls = rawCalls(output, start)
    .filter((c): c is RawCall & { name: string } => c.name !== undefined && c.name !== "")
    .map((c) => ({
      name: c.name,
      arguments: pythonJsonDumps(argumentsJson(parameters(c.body, false), c.name, tools)),
    }));
  if (toolCalls.length === 0) return { toolsCalled: false, toolCalls: [], content: output };
  // Content next to tool calls is stripped (the engine's strip_content_whitespace_with_tools).
  const content = output.slice(0, start).trim();
  return { toolsCalled: true, toolCalls, content: content === "" ? null : content };
}

function parseRegion(tools: readonly ToolDefinition[]) {
  return (region: string, final: boolean): PartialCall[] =>
    rawCalls(region, 0).map((c) => {
      const complete = c.closed || final;
      if (c.name === undefined || c.name === "") return { name: undefined, arguments: "", complete };
      const args = argumentsJson(parameters(c.body, !complete), c.name, tools);
      const json = pythonJsonDumps(args);
      // An open call: its closed parameters so far, without the closing brace.
      return { name: c.name, arguments: complete ? json : json.slice(0, -1), complete };
    });
}

export const qwen3Coder: ToolParser = {
  name: "qwen3_coder",
  supportsRequiredAndNamed: true,
  keepSpecialTokens: false,
  extract: (output, tools) => extract(output, tools),
  stream: (tools) =>
    new RegionStream({
      findStart: regionStart,
      holdBack: (text) => Math.max(partialTagOverlap(text, TOOL_START), partialTagOverlap(text, FUNC_PREFIX)),
      parse: parseRegion(tools),
      reserialized: false,
    }),
};
