// The reasoning parsers by `--reasoning-parser` name; adding one is one module plus one line here.
import { deepseekR1 } from "./deepseek-r1.js";
import { ReasoningParserError } from "./errors.js";
import { qwen3 } from "./qwen3.js";
import type { ReasoningParser } from "./types.js";

const PARSERS: ReadonlyMap<string, ReasoningParser> = new Map(
  [qwen3, deepseekR1].map((p) => [p.name, p] as const),
);

export const REASONING_PARSER_NAMES: readonly string[] = [...PARSERS.keys()];

export function reasoningParser(name: string): ReasoningParser {
  const parser = PARSERS.get(name);
  if (parser === undefined) {
    // vLLM: TypeError(f"{reasoning_parser_name=} has not been registered")
    throw new ReasoningParserError(
      `reasoning_parser_name='${name}' has not been registered (available: ${REASONING_PARSER_NAMES.join(", ")})`,
    );
  }
  return parser;
}

export { ReasoningParserError } from "./errors.js";
export type {
  ReasoningDelta,
  ReasoningParser,
  ReasoningSession,
  ReasoningSplit,
  ReasoningStream,
} from "./types.js";
