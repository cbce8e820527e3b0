// The tool-call parsers by `--tool-call-parser` name (vllm/tool_parsers/__init__.py registers the same
// names); adding one is one module plus one line here.
import { ToolParserError } from "./errors.js";
import { hermes } from "./hermes.js";
import type { ToolParser } from "./types.js";

const PARSERS: ReadonlyMap<string, ToolParser> = new Map([
  ["hermes", hermes],
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
