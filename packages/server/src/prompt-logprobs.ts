// The prompt's logprobs (`prompt_logprobs`), from the engine's `new_prompt_logprobs_tensors` (row i scores
// prompt token i + 1; column 0 that token with its rank, then the top k), built as vLLM's
// `LogprobsProcessor._update_prompt_logprobs` (vllm/v1/engine/logprobs.py) and `create_prompt_logprobs` /
// `append_logprobs_for_next_position` (vllm/logprobs.py) build them: `None` for the first prompt token, then
// per token a dict `{token_id: Logprob(logprob, rank, decoded_token)}` in column order (the prompt token first
// with its own rank, then the top k with ranks 1..k; a top-k duplicate of the prompt token keeps the first
// key and takes the later value), -inf shown as -9999 (`clamp_prompt_logprobs`: only -inf, unlike the
// `max(logprob, -9999)` of the sample logprobs).
import type { Tokenizer } from "@vllm-engine-core/text";
import { type LogprobPosition, type PromptLogprobsTensors, positionsOf } from "./logprobs.js";
import { verifiedTokenTexts } from "./token-text.js";

/** vLLM's `Logprob` dataclass as pydantic writes it. */
export interface PromptLogprob {
  logprob: number;
  rank: number | null;
  decoded_token: string | null;
}

/**
 * One entry per prompt token. A position is a Map (token id → Logprob) because its key order is the
 * column order, which a plain object would lose to integer-key ordering: serialize with `jsonWithMaps`.
 */
export type PromptLogprobs = (Map<number, PromptLogprob> | null)[];

export interface PromptScores {
  /** The `prompt_logprobs` field. */
  json: PromptLogprobs;
  /** The same positions as completion logprobs read them (echo): null for the first prompt token. */
  positions: (LogprobPosition | null)[];
}

const clampInfinity = (v: number): number => (v === Number.NEGATIVE_INFINITY ? -9999 : v);

/** `numPromptLogprobs` is the request's `prompt_logprobs` (-1: every column the engine sent). */
export function promptScores(
  tok: Tokenizer,
  tensors: PromptLogprobsTensors,
  numPromptLogprobs: number,
): PromptScores {
  const [rows = 0, width = 0] = tensors.logprobTokenIds.shape;
  const ids = tensors.logprobTokenIds.data as ArrayLike<number | bigint>;
  const values = tensors.logprobs.data as ArrayLike<number | bigint>;
  const ranks = tensors.selectedTokenRanks.data as ArrayLike<number | bigint>;
  const topK = numPromptLogprobs === -1 ? width - 1 : numPromptLogprobs;
  const all = Array.from(ids, (id) => Number(id));
  const strings = tok.tokenStrings(all);
  const json: PromptLogprobs = [null];
  const positions: (LogprobPosition | null)[] = [null, ...positionsOf(tensors)];
  // zip(token_ids, logprobs, ranks, tokens): the rank iterator has 1 + k items, so it bounds the columns.
  const columns = Math.min(width, 1 + topK);
  for (let r = 0; r < rows; r++) {
    const rowIds = all.slice(r * width, r * width + columns);
    // The context of a byte-fallback piece: the prompt tokens scored before this one (the last 4 entries
    // of the list so far; the first prompt token has no entry, so it is never part of it).
    const context: number[] = [];
    for (let q = Math.max(0, r - 4); q < r; q++) context.push(all[q * width]!);
    const texts = verifiedTokenTexts(tok, strings.slice(r * width, r * width + columns), rowIds, context);
    const dict = new Map<number, PromptLogprob>();
    for (let c = 0; c < columns; c++) {
      dict.set(rowIds[c]!, {
        logprob: clampInfinity(Number(values[r * width + c])),
        rank: c === 0 ? Number(ranks[r]) : c,
        decoded_token: texts[c]!,
      });
    }
    json.push(dict);
    // Echoed logprobs show the same texts.
    const position = positions[r + 1]!;
    position.texts = position.entries.map(
      (e) => dict.get(e.tokenId)?.decoded_token ?? tok.tokenStrings([e.tokenId])[0]!,
    );
  }
  return { json, positions };
}

/**
 * JSON text of `value` where Maps are objects with their insertion order kept (token-id keys included);
 * everything else as `JSON.stringify`.
 */
export function jsonWithMaps(value: unknown): string {
  if (value instanceof Map) {
    const parts: string[] = [];
    for (const [k, v] of value) parts.push(`${JSON.stringify(String(k))}:${jsonWithMaps(v)}`);
    return `{${parts.join(",")}}`;
  }
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? "null" : jsonWithMaps(v))).join(",")}]`;
  if (value !== null && typeof value === "object" && !ArrayBuffer.isView(value)) {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) parts.push(`${JSON.stringify(k)}:${jsonWithMaps(v)}`);
    }
    return `{${parts.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
