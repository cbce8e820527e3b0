// The engine's sample logprobs (`EngineCoreOutput.new_logprobs`: one row per new token, column 0 the
// sampled token with its rank, then the top-k) in the two OpenAI shapes. vLLM first builds one dict per
// position from the columns in order (vllm/logprobs.py `append_logprobs_for_next_position`: the sampled token
// first, a top-k duplicate of it merged into that entry), then shows entries of that dict.
import type { EngineCoreOutput } from "@vllm-engine-core/client";
import type { Tokenizer } from "@vllm-engine-core/text";

/** The engine's prompt logprobs of one output (`new_prompt_logprobs_tensors`). */
export type PromptLogprobsTensors = NonNullable<EngineCoreOutput["newPromptLogprobsTensors"]>;

interface Entry {
  tokenId: number;
  logprob: number;
}

/** One position: the sampled token and the dict of its columns in insertion order. */
export interface LogprobPosition {
  tokenId: number;
  logprob: number;
  entries: Entry[];
  /** The entries' texts when they are not `tokenStrings` of their ids (prompt logprobs, UTF-8 corrected). */
  texts?: string[];
}

/** vLLM clamps -inf to the JSON-serialisable floor OpenAI uses (`max(logprob, -9999.0)`). */
function clamp(logprob: number): number {
  return Number.isNaN(logprob) ? logprob : Math.max(logprob, -9999);
}

export function logprobPositions(output: EngineCoreOutput): LogprobPosition[] | null {
  const lp = output.newLogprobs;
  return lp == null ? null : positionsOf(lp);
}

/** A delta's sample logprobs: its one output's, or every merged output's in order (a stream interval > 1). */
export function deltaLogprobPositions(delta: {
  output: EngineCoreOutput;
  outputs?: readonly EngineCoreOutput[] | undefined;
}): LogprobPosition[] | null {
  if (delta.outputs === undefined) return logprobPositions(delta.output);
  const all: LogprobPosition[] = [];
  let any = false;
  for (const output of delta.outputs) {
    const positions = logprobPositions(output);
    if (positions === null) continue;
    any = true;
    all.push(...positions);
  }
  return any ? all : null;
}

/** One position per row of a `[rows, 1 + k]` pair of id and logprob tensors (sample or prompt logprobs). */
export function positionsOf(
  lp: Pick<PromptLogprobsTensors, "logprobTokenIds" | "logprobs">,
): LogprobPosition[] {
  const [rows = 0, width = 0] = lp.logprobTokenIds.shape;
  const ids = lp.logprobTokenIds.data as ArrayLike<number | bigint>;
  const values = lp.logprobs.data as ArrayLike<number | bigint>;
  const positions: LogprobPosition[] = [];
  for (let r = 0; r < rows; r++) {
    const entries: Entry[] = [];
    const seen = new Set<number>();
    for (let c = 0; c < width; c++) {
      const tokenId = Number(ids[r * width + c]);
      if (seen.has(tokenId)) continue;
      seen.add(tokenId);
      entries.push({ tokenId, logprob: clamp(Number(values[r * width + c])) });
    }
    positions.push({ tokenId: entries[0]!.tokenId, logprob: entries[0]!.logprob, entries });
  }
  return positions;
}

function utf8Bytes(s: string): number[] {
  return [...Buffer.from(s, "utf8")];
}

export interface ChatLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}
export interface ChatLogprobContent extends ChatLogprob {
  top_logprobs: ChatLogprob[];
}

/** vLLM's `format_token_id_placeholder` (--return-tokens-as-token-ids). */
export function tokenIdPlaceholder(tokenId: number): string {
  return `token_id:${tokenId}`;
}

/**
 * Chat shape (`_create_chat_logprobs`): each token with its logprob and UTF-8 bytes, and as
 * `top_logprobs` the first `topLogprobs` entries of the position's dict (`_get_top_logprobs`). With
 * `tokensAsIds` every token is `token_id:N`; the sampled token's `bytes` stay those of its text (vLLM
 * encodes `decoded_token` there), the top entries' bytes are those of the placeholder (vLLM encodes `token`).
 */
export function chatLogprobs(
  tok: Tokenizer,
  positions: readonly LogprobPosition[],
  topLogprobs: number,
  tokensAsIds = false,
): ChatLogprobContent[] {
  return positions.map((p) => {
    const shown = p.entries.slice(0, topLogprobs);
    const strings = tok.tokenStrings([p.tokenId, ...shown.map((e) => e.tokenId)]);
    const shownToken = (i: number, id: number) => (tokensAsIds ? tokenIdPlaceholder(id) : strings[i]!);
    return {
      token: shownToken(0, p.tokenId),
      logprob: p.logprob,
      bytes: utf8Bytes(strings[0]!),
      top_logprobs: shown.map((e, i) => {
        const token = shownToken(i + 1, e.tokenId);
        return { token, logprob: e.logprob, bytes: utf8Bytes(token) };
      }),
    };
  });
}

export interface CompletionLogprobs {
  text_offset: number[];
  token_logprobs: (number | null)[];
  tokens: string[];
  top_logprobs: (Record<string, number> | null)[];
}

/** Python's len(): code points. */
export function pyLen(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** A token without logprobs: the first prompt token of an echoed prompt (vLLM's `None` position). */
export interface UnscoredToken {
  tokenId: number;
  entries: null;
}

/**
 * Completions shape (`_create_completion_logprobs`): tokens, their logprobs, text offsets (the first one
 * `initialOffset`, the text returned before these tokens, then each token's length added), and per
 * position a dict of the entries with index <= n (OpenAI's "top n + 1"). An unscored token shows as
 * `decode([id])` with null logprob and null top logprobs. With `tokensAsIds` tokens and keys are
 * `token_id:N`, and offsets advance by the placeholder's length, as vLLM's do.
 */
export function completionLogprobs(
  tok: Tokenizer,
  positions: readonly (LogprobPosition | UnscoredToken)[],
  n: number,
  initialOffset: number,
  tokensAsIds = false,
): CompletionLogprobs {
  const out: CompletionLogprobs = { text_offset: [], token_logprobs: [], tokens: [], top_logprobs: [] };
  let offset = initialOffset;
  for (const p of positions) {
    let token: string;
    if (p.entries === null) {
      token = tokensAsIds ? tokenIdPlaceholder(p.tokenId) : tok.decode([p.tokenId]);
      out.tokens.push(token);
      out.token_logprobs.push(null);
      out.top_logprobs.push(null);
    } else {
      const shown = p.entries.slice(0, n + 1);
      const ids = [p.tokenId, ...shown.map((e) => e.tokenId)];
      const strings = tokensAsIds
        ? ids.map(tokenIdPlaceholder)
        : p.texts === undefined
          ? tok.tokenStrings(ids)
          : [p.texts[0]!, ...p.texts.slice(0, shown.length)];
      token = strings[0]!;
      out.tokens.push(token);
      out.token_logprobs.push(p.logprob);
      const top: Record<string, number> = {};
      shown.forEach((e, i) => {
        top[strings[i + 1]!] = e.logprob;
      });
      out.top_logprobs.push(top);
    }
    out.text_offset.push(offset);
    offset += pyLen(token);
  }
  return out;
}
