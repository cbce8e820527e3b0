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

/**
 * `extra_args["scripted_token_ids"]`: the script's tokens in order, then (`scripted_end` "eos") the
 * request's EOS, or ("continue", the default) the mode's usual tokens, as the model-free executor of
 * vLLM's real engine does. Stop rules apply as to any token: a script may end itself with the EOS id.
 */
export class ScriptedTokenStream {
  #next = 0;
  private constructor(
    readonly script: { tokenIds: readonly number[]; end: "continue" | "eos" },
    readonly eosTokenId: number | null,
    readonly after: { next(): number },
  ) {}

  static around(
    script: { tokenIds: readonly number[]; end: "continue" | "eos" } | null,
    eosTokenId: number | null,
    after: { next(): number },
  ): { next(): number } {
    return script === null ? after : new ScriptedTokenStream(script, eosTokenId, after);
  }

  next(): number {
    const i = this.#next++;
    if (i < this.script.tokenIds.length) return this.script.tokenIds[i]!;
    if (this.script.end === "eos" && this.eosTokenId !== null) return this.eosTokenId;
    return this.after.next();
  }
}
