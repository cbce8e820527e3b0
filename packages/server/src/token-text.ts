// The text a logprobs entry shows for a token whose own decode ends in U+FFFD (a byte-fallback piece of a
// multi-byte character), as vLLM's `LogprobsProcessor._correct_decoded_token` / `_verify_tokens`
// (vllm/v1/engine/logprobs.py) fix it: decoded after up to 4 preceding tokens of the sequence, minus the text
// of the clean (non-byte-fallback) part of that context; "" while the character is still incomplete.
import type { Tokenizer } from "@vllm-engine-core/text";

const REPLACEMENT = "\uFFFD";

/** `context`: the sequence's preceding token ids, oldest first (vLLM looks at the last 4). */
export function correctedTokenText(tok: Tokenizer, tokenId: number, context: readonly number[]): string {
  const most = Math.min(context.length, 4);
  for (let k = 1; k <= most; k++) {
    const ctx = context.slice(context.length - k);
    const full = tok.decode([...ctx, tokenId]);
    if (full.endsWith(REPLACEMENT)) continue;
    // Context tokens that are byte-fallback pieces themselves showed "": their text belongs to this token.
    let cleanEnd = ctx.length;
    for (let j = ctx.length - 1; j >= 0; j--) {
      if (!tok.decode([ctx[j]!]).endsWith(REPLACEMENT)) break;
      cleanEnd = j;
    }
    const prefix = cleanEnd > 0 ? tok.decode(ctx.slice(0, cleanEnd)) : "";
    if (full.startsWith(prefix)) return full.slice(prefix.length);
    // Normalization may change the prefix: drop the longest common prefix (in code points, as Python).
    const a = Array.from(prefix);
    const b = Array.from(full);
    let common = 0;
    while (common < a.length && common < b.length && a[common] === b[common]) common++;
    return b.slice(common).join("");
  }
  return "";
}

/** `texts` with each one ending in U+FFFD replaced by its corrected text (vLLM's `_verify_tokens`). */
export function verifiedTokenTexts(
  tok: Tokenizer,
  texts: readonly string[],
  tokenIds: readonly number[],
  context: readonly number[],
): string[] {
  return texts.map((text, i) =>
    text.endsWith(REPLACEMENT) ? correctedTokenText(tok, tokenIds[i]!, context) : text,
  );
}
