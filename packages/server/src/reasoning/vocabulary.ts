import { ReasoningParserError } from "./errors.js";
import type { Vocabulary } from "./types.js";

/** The marker tokens' ids; a tokenizer without them cannot serve this parser (vLLM raises the same). */
export function markerIds(
  vocab: Vocabulary,
  parser: string,
  start: string,
  end: string,
): { startId: number; endId: number } {
  const startId = vocab.tokenToId(start);
  const endId = vocab.tokenToId(end);
  if (startId === undefined || endId === undefined) {
    throw new ReasoningParserError(
      `the ${parser} reasoning parser could not locate the think start/end tokens ${start} ${end} in the ` +
        "tokenizer: serve a model that has them, or choose another --reasoning-parser",
    );
  }
  return { startId, endId };
}
