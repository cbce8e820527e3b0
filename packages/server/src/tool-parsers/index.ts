// The tool-call parsers by `--tool-call-parser` name (vllm/tool_parsers/__init__.py registers the same
// names); adding one is one module plus one line here.
import { deepseekV3 } from "./deepseek-v3.js";
import { ToolParserError } from "./errors.js";
import { hermes } from "./hermes.js";
import { llama3Json } from "./llama3-json.js";
import { mistral } from "./mistral.js";
import { qwen3Coder } from "./qwen3-coder.js";
import type { ToolParser } from "./types.js";

const PARSERS: ReadonlyMap<string, ToolParser> = new Map([
  ["hermes", hermes],
  ["qwen3_coder", qwen3Coder],
  ["qwen3_xml", qwen3Coder], // vLLM registers both names to its Qwen3 engine parser
  ["llama3_json", llama3Json],
  ["llama4_json", llama3Json], // ditto (Llama3JsonToolParser)
  ["mistral", mistral],
  ["deepseek_v3", deepseekV3],
]);

export const TOOL_PARSER_NAMES: readonly string[] = [...PARSERS.keys()];

export function toolParser(name: string): ToolParser {
  const parser = PARSERS.get(name);
  if (parser === undefined) {
    // vLLM's ParserManager.get_tool_parser wording.
    throw new ToolParserError(
      `Error: --enable-auto-tool-choice requires tool_parser:'${name}' which has not been registered ` +
        `(available: ${TOOL_PARSER_NAMES.join(", ")})`,
    );
  }
  return parser;
}

export { ToolParserError } from "./errors.js";
export type * from "./types.js";
