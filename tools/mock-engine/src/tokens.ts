// The mock's deterministic "model": the k-th generated token of a request depends only on its request id,
// its prompt and k, so tests can compute exactly what the engine will emit (and pick stop tokens from it).

/** Size of the mock vocabulary: every generated token id is in [0, MOCK_VOCAB_SIZE). */
export const MOCK_VOCAB_SIZE = 32_000;

function fnv1a(requestId: string, promptTokenIds: readonly number[]): number {
  let h = 0x811c9dc5;
  const mix = (byte: number) => {
    h ^= byte & 0xff;
    h = Math.imul(h, 0x01000193) >>> 0;
  };
  for (const byte of new TextEncoder().encode(requestId)) mix(byte);
  mix(0xff); // separator: ("ab", [1]) and ("a", ...) must not collide trivially
  for (const token of promptTokenIds) {
    const t = token >>> 0;
    mix(t);
    mix(t >>> 8);
    mix(t >>> 16);
    mix(t >>> 24);
  }
  return h === 0 ? 0x9e3779b9 : h; // xorshift must not start at 0
}

/** Stateful generator; `next()` yields expectedTokens(requestId, prompt, ∞) one token at a time. */
export class TokenStream {
  #state: number;
  constructor(requestId: string, promptTokenIds: readonly number[]) {
    this.#state = fnv1a(requestId, promptTokenIds);
  }
  next(): number {
    let x = this.#state;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    this.#state = x;
    return x % MOCK_VOCAB_SIZE;
  }
}

/**
 * The first `count` tokens the mock engine generates for this request (before any stop/length rule cuts
 * the sequence). Prefix-stable: expectedTokens(id, p, n) is a prefix of expectedTokens(id, p, n + 1).
 */
export function expectedTokens(
  requestId: string,
  promptTokenIds: readonly number[],
  count: number,
): number[] {
  const stream = new TokenStream(requestId, promptTokenIds);
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(stream.next());
  return out;
}

/** `--echo-prompt`: the k-th generated token is prompt token k (cycling), so the streamed text is the prompt's. */
export class EchoTokenStream {
  readonly #prompt: readonly number[];
  #next = 0;
  constructor(promptTokenIds: readonly number[]) {
    this.#prompt = [...promptTokenIds];
  }
  next(): number {
    const token = this.#prompt[this.#next % this.#prompt.length]!;
    this.#next++;
    return token;
  }
}

/** The first `count` tokens an `--echo-prompt` engine generates for this prompt (before stop/length rules). */
export function echoedTokens(promptTokenIds: readonly number[], count: number): number[] {
  const stream = new EchoTokenStream(promptTokenIds);
  return Array.from({ length: count }, () => stream.next());
}

// ---- scripted mode, as the model-free executor of vLLM's real engine plays it ---------------------------
// tools/vllm-executor/vllm_model_free/script.py (TokenChooser, deterministic_token, prompt_seed): the
// differential test (tools/real-engine/test/vllm/differential.test.ts) checks these ids against it.

/** FNV-1a over the prompt's ids (one 32-bit word each), kept to 31 bits: script.py `prompt_seed`. */
export function promptSeed(promptTokenIds: readonly number[]): number {
  let h = 2166136261;
  for (const t of promptTokenIds) h = Math.imul((h ^ t) >>> 0, 16777619) >>> 0;
  return h & 0x7fffffff;
}

/**
 * Output `index` of a request whose script ran out (or was masked): script.py `deterministic_token`,
 * `1000 + ((seed * 31 + index * 7919) mod min(50000, vocab - 1000))`. Exact in doubles (< 2^53).
 */
export function modelFreeToken(seed: number, index: number, vocabSize = MOCK_VOCAB_SIZE): number {
  const base = vocabSize > 1000 ? 1000 : 0;
  const span = vocabSize > 1000 ? Math.max(1, Math.min(50_000, vocabSize - 1000)) : Math.max(1, vocabSize);
  return base + ((seed * 31 + index * 7919) % span);
}

/**
 * `extra_args["scripted_token_ids"]`: the script's tokens in order, then (`scripted_end` "eos") the EOS —
 * the request's, else the model's (`--eos-token-id`) — at every later position, or ("continue", the
 * default) the executor's deterministic ids, `modelFreeToken(promptSeed(prompt), index)` (echoed tokens
 * with `--echo-prompt`). Stop rules apply as to any token: a script may end itself with the EOS id.
 */
export class ScriptedTokenStream {
  #next = 0;
  constructor(
    readonly script: { tokenIds: readonly number[]; end: "continue" | "eos" },
    readonly eosTokenId: number | null,
    /** The token at an output index past the script ("continue"). */
    readonly after: (index: number) => number,
  ) {}

  next(): number {
    const i = this.#next++;
    if (i < this.script.tokenIds.length) return this.script.tokenIds[i]!;
    if (this.script.end === "eos" && this.eosTokenId !== null) return this.eosTokenId;
    return this.after(i);
  }
}

/**
 * vLLM's min-tokens logits processor (MinTokensLogitsProcessor, vllm/v1/sample/logits_processor/builtin.py)
 * masks the stop ids until `min_tokens` outputs exist, so no model emits one there. As the model-free
 * executor does (TokenChooser.token), a masked id becomes the next deterministic id that is not masked.
 */
export class MinTokensMask {
  #next = 0;
  constructor(
    readonly inner: { next(): number },
    readonly minTokens: number,
    readonly masked: ReadonlySet<number>,
    readonly seed: number,
  ) {}

  static around(
    inner: { next(): number },
    minTokens: number,
    masked: ReadonlySet<number>,
    seed: number,
  ): { next(): number } {
    return minTokens > 0 && masked.size > 0 ? new MinTokensMask(inner, minTokens, masked, seed) : inner;
  }

  next(): number {
    const index = this.#next++;
    let token = this.inner.next();
    if (index >= this.minTokens) return token;
    for (let probe = index; this.masked.has(token); probe++) token = modelFreeToken(this.seed, probe);
    return token;
  }
}
