// Incremental decoding of one request's generated tokens: the sliding-window algorithm of Hugging Face
// tokenizers' `DecodeStream` (tokenizers/src/tokenizer/mod.rs, `step_decode_stream`), which vLLM's
// `FastIncrementalDetokenizer` (vllm/v1/engine/detokenizer.py) drives with the prompt as prefill.
//
// Each step decodes the window `ids` (the tokens since the last emitted chunk plus the new one) and emits
// what it adds to `prefix` (the decode of the tokens before it). Text that ends in U+FFFD is held back: it
// is an unfinished UTF-8 sequence (byte-level or byte-fallback tokens) until a later token completes it.

export const REPLACEMENT_CHARACTER = "\ufffd";

/** A decode of token ids with the request's `skip_special_tokens` already applied. */
export type DecodeFn = (ids: readonly number[]) => string;

export interface TokenDecodeStream {
  /** Adds one generated token and returns the text it completes ("" while text is held back). */
  step(tokenId: number): string;
  /**
   * Ends the stream: returns the held-back text without its unfinished end (`withoutBrokenEnd`): the
   * characters the held tokens complete are kept, the bytes of a character they leave unfinished are dropped.
   */
  flush(): string;
}

// vLLM's Rust frontend (rust/src/tokenizer/src/incremental.rs, `seed_prefix`) primes from the shortest
// prompt suffix of 4 to 6 tokens that decodes without U+FFFD instead of decoding the whole prompt.
const CLEAN_SUFFIX_MIN = 4;
const CLEAN_SUFFIX_MAX = 6;
/** Otherwise the last 32 prompt tokens are the context: bounded, unlike tokenizers' full-prompt prefill. */
const FALLBACK_CONTEXT = 32;
/** A UTF-8 character is at most 4 bytes, so an unfinished one spans at most 3 trailing tokens. */
const MAX_UNFINISHED_TAIL = 4;

/**
 * Where the prompt's text ends cleanly: `ids` is the prompt context and `prefixIndex` the number of its
 * tokens decoded cleanly. When the prompt ends inside a character, its last tokens (from `prefixIndex`)
 * stay in the window and `prefix` is the prompt text without the unfinished character, so the generated
 * token that completes the character emits that character alone (tokenizers' DecodeStream, which vLLM
 * prefills with the prompt, echoes the whole prompt text in that case).
 */
export function seedContext(
  decode: DecodeFn,
  promptTokenIds: readonly number[],
): { ids: number[]; prefix: string; prefixIndex: number } {
  const n = promptTokenIds.length;
  if (n === 0) return { ids: [], prefix: "", prefixIndex: 0 };
  if (n > CLEAN_SUFFIX_MIN) {
    for (let len = CLEAN_SUFFIX_MIN; len <= Math.min(CLEAN_SUFFIX_MAX, n - 1); len++) {
      const ids = promptTokenIds.slice(n - len);
      const text = decode(ids);
      if (!text.includes(REPLACEMENT_CHARACTER)) return { ids, prefix: text, prefixIndex: ids.length };
    }
  }
  const ids = promptTokenIds.slice(Math.max(0, n - FALLBACK_CONTEXT));
  const text = decode(ids);
  if (!text.endsWith(REPLACEMENT_CHARACTER)) return { ids, prefix: text, prefixIndex: ids.length };
  for (let j = ids.length - 1; j >= Math.max(0, ids.length - MAX_UNFINISHED_TAIL); j--) {
    const head = decode(ids.slice(0, j));
    // The held tokens may hold whole characters before the unfinished one (" \xe2\x98": a space and two
    // bytes of "☕"): they belong to the prompt's text, so the prefix covers them.
    if (!head.endsWith(REPLACEMENT_CHARACTER)) return { ids, prefix: withoutBrokenEnd(text), prefixIndex: j };
  }
  // The prompt's end is broken beyond repair: it gives no context.
  return { ids: [], prefix: "", prefixIndex: 0 };
}

/**
 * The held-back text at the end of a stream without the U+FFFD run it ends in. Text is held back exactly
 * while its decode ends in U+FFFD (an unfinished character, or bytes that are no UTF-8), and vLLM never
 * emits it: FastIncrementalDetokenizer (vllm/v1/engine/detokenizer.py) has no flush, so at the end
 * `DecodeStream` drops everything still held. Here only the broken end goes: whole characters decoded before
 * it in the same held tokens (a byte-level token " \xe2\x98" holds a space and two bytes of "☕") are kept.
 */
export function withoutBrokenEnd(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === REPLACEMENT_CHARACTER) end--;
  return end === text.length ? text : text.slice(0, end);
}

function utf8Length(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

/** `DecodeStream` over any tokenizer's decode (one decode of a short window per step, two per chunk). */
export class WindowDecodeStream implements TokenDecodeStream {
  readonly #decode: DecodeFn;
  #ids: number[];
  #prefix: string;
  #prefixIndex: number;

  constructor(decode: DecodeFn, promptTokenIds: readonly number[]) {
    this.#decode = decode;
    const seed = seedContext(decode, promptTokenIds);
    this.#ids = seed.ids;
    this.#prefix = seed.prefix;
    this.#prefixIndex = seed.prefixIndex;
  }

  step(tokenId: number): string {
    const decode = this.#decode;
    if (this.#prefix === "" && this.#ids.length > 0) {
      // step_decode_stream: an empty prefix is (re)computed from the window before the new token.
      const prefix = decode(this.#ids);
      if (!prefix.endsWith(REPLACEMENT_CHARACTER)) {
        this.#prefix = prefix;
        this.#prefixIndex = this.#ids.length;
      }
    }
    this.#ids.push(tokenId);
    const text = decode(this.#ids);
    if (text.endsWith(REPLACEMENT_CHARACTER)) return "";
    if (!text.startsWith(this.#prefix)) {
      // tokenizers compares byte lengths first and only then raises "Invalid prefix encountered"; vLLM's
      // FastIncrementalDetokenizer._protected_step recovers with a fresh stream and steps the token again.
      if (utf8Length(text) <= utf8Length(this.#prefix)) return "";
      this.#ids = [];
      this.#prefix = "";
      this.#prefixIndex = 0;
      return this.step(tokenId);
    }
    if (text.length === this.#prefix.length) return "";
    const chunk = text.slice(this.#prefix.length);
    const newPrefixIndex = this.#ids.length - this.#prefixIndex;
    this.#ids = this.#ids.slice(this.#prefixIndex);
    this.#prefix = decode(this.#ids);
    this.#prefixIndex = newPrefixIndex;
    return chunk;
  }

  flush(): string {
    let chunk = "";
    if (this.#ids.length > this.#prefixIndex) {
      const text = this.#decode(this.#ids);
      // A decoder whose output is not monotonic (ByteFallback turns a whole invalid byte run into one
      // U+FFFD per byte) can rewrite text already emitted; then only the held tokens are decoded.
      chunk = text.startsWith(this.#prefix)
        ? text.slice(this.#prefix.length)
        : this.#decode(this.#ids.slice(this.#prefixIndex));
    }
    this.#ids = [];
    this.#prefix = "";
    this.#prefixIndex = 0;
    return withoutBrokenEnd(chunk);
  }
}
