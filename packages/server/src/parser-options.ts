// The server options that pick the output parsers, checked at startup as vLLM's CLI does
// (vllm/entrypoints/openai/cli_args.py `validate_parsed_serve_args`, vllm/parser/parser_manager.py).

import type { ReasoningParser } from "./reasoning/index.js";
import { reasoningParser } from "./reasoning/index.js";
import type { ToolServing } from "./tool-calls.js";
import { ToolParserError, toolParser } from "./tool-parsers/index.js";

export interface ParserOptions {
  enableAutoToolChoice?: boolean;
  toolCallParser?: string;
  reasoningParser?: string;
}

export function parserServing(
  options: ParserOptions,
  vocab: { tokenToId(token: string): number | undefined },
): {
  toolServing: ToolServing;
  reasoningParser: ReasoningParser | undefined;
} {
  const enable = options.enableAutoToolChoice ?? false;
  if (enable && !options.toolCallParser) {
    throw new ToolParserError("Error: --enable-auto-tool-choice requires --tool-call-parser");
  }
  // The parser name is checked even when unused; vLLM only loads it with --enable-auto-tool-choice.
  const named = options.toolCallParser ? toolParser(options.toolCallParser) : undefined;
  // Some formats depend on the tokenizer (Mistral's [ARGS] generation).
  const parser = named?.forVocabulary ? named.forVocabulary(vocab) : named;
  return {
    toolServing: { enableAutoToolChoice: enable, toolParser: enable ? parser : undefined },
    reasoningParser: options.reasoningParser ? reasoningParser(options.reasoningParser) : undefined,
  };
}
