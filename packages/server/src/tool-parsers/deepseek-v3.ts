// `deepseek_v3`: DeepSeek-V3 / R1 tool calls, after vLLM's `DeepSeekV3ToolParser`
// (vllm/tool_parsers/deepseekv3_tool_parser.py):
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>
// Arguments are the model's JSON text as written. Text before the calls is content.

import type { PartialCall } from "./region-stream.js";
import { RegionStream } from "./region-stream.js";
import { partialTagOverlap } from "./text.js";
import type { ExtractedToolCalls, ToolParser } from "./types.js";

const CALLS_BEGIN = "<｜tool▁calls▁begin｜>";
const CALL_BEGIN = "<｜tool▁call▁begin｜>";
const SEP = "<｜tool▁sep｜>";
const ARGS_OPEN = "\n```json\n";
const ARGS_CLOSE = "\n```";
// vLLM's regex, no DOTALL: each part on one line.
const CALL_RE = /<｜tool▁call▁begin｜>(.*)<｜tool▁sep｜>(.*)\n```json\n(.*)\n```<｜tool▁call▁end｜>/g;

function extract(output: string): ExtractedToolCalls {
  const at = output.indexOf(CALLS_BEGIN);
  if (at === -1) return { toolsCalled: false, toolCalls: [], content: output };
  const toolCalls = [...output.matchAll(CALL_RE)].map((m) => ({
    name: m[2] as string,
    arguments: m[3] as string,
  }));
  const content = output.slice(0, at);
  // vLLM reports tools_called once the start token is there, even when no call parsed.
  return { toolsCalled: true, toolCalls, content: content === "" ? null : content };
}

function parseRegion(region: string): PartialCall[] {
  const calls: PartialCall[] = [];
  for (const part of region.split(CALL_BEGIN).slice(1)) {
    const sep = part.indexOf(SEP);
    const nameEnd = sep === -1 ? -1 : part.indexOf("\n", sep + SEP.length);
    if (nameEnd === -1) {
      calls.push({ name: undefined, arguments: "", complete: false });
      break;
    }
    const name = part.slice(sep + SEP.length, nameEnd);
    const open = part.indexOf(ARGS_OPEN, nameEnd);
    if (open === -1) {
      calls.push({ name, arguments: "", complete: false });
      break;
    }
    const body = part.slice(open + ARGS_OPEN.length);
    const close = body.indexOf(ARGS_CLOSE);
    // While streaming, trailing newlines and backticks may be the start of the closing fence.
    const args = close === -1 ? body.replace(/[\n`]+$/, "") : body.slice(0, close);
    calls.push({ name, arguments: args, complete: close !== -1 });
    if (close === -1) break;
  }
  return calls;
}

export const deepseekV3: ToolParser = {
  name: "deepseek_v3",
  supportsRequiredAndNamed: true,
  keepSpecialTokens: false,
  extract: (output) => extract(output),
  stream: () =>
    new RegionStream({
      findStart: (text) => text.indexOf(CALLS_BEGIN),
      holdBack: (text) => partialTagOverlap(text, CALLS_BEGIN),
      parse: parseRegion,
      reserialized: false,
    }),
};
