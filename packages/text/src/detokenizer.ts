// vLLM's per-request incremental detokenizer (vllm/v1/engine/detokenizer.py: BaseIncrementalDetokenizer
// with FastIncrementalDetokenizer's decode_next). Tokens are decoded one by one through a DecodeStream
// primed with the prompt, stop strings are checked on the new text only, and the streamed text holds back
// the last `max(len(stop)) - 1` characters while stop strings are to be excluded from the output.
//
// When the engine finishes the request, text still held back (its decode ends in U+FFFD: the last tokens
// left a character unfinished) loses its broken end, as vLLM drops it (FastIncrementalDetokenizer has no
// flush); whole characters held with it are emitted, which vLLM drops too (see the README, "UTF-8 edges").
// A prompt that ends inside a character: the first generated token that completes it emits that one
// character, where vLLM (tokenizers' DecodeStream prefill) repeats the whole prompt text.

import type { TokenDecodeStream } from "./decode-stream.js";
import { InvalidTextOptionsError } from "./errors.js";
import { checkStopStrings, codePointLength, codePointsBack } from "./stop-strings.js";
import type { Tokenizer } from "./tokenizer.js";

export interface DetokenizerOptions {
  /** The request's prompt: the decode stream is primed with its last tokens. */
  promptTokenIds: readonly number[];
  /** `SamplingParams.stop`. */
  stop?: string | readonly string[] | null | undefined;
  /** `SamplingParams.include_stop_str_in_output` (default false). */
  includeStopStrInOutput?: boolean | undefined;
  /** `SamplingParams.min_tokens` (default 0): no stop string is matched within the first `minTokens` tokens. */
  minTokens?: number | undefined;
  /** `SamplingParams.skip_special_tokens` (default true). */
  skipSpecialTokens?: boolean | undefined;
  /** `SamplingParams.spaces_between_special_tokens` (default true). */
  spacesBetweenSpecialTokens?: boolean | undefined;
}

function normalizeStop(stop: DetokenizerOptions["stop"]): string[] {
  if (stop == null) return [];
  const list = typeof stop === "string" ? [stop] : [...stop];
  list.forEach((s, i) => {
    if (typeof s !== "string") {
      throw new InvalidTextOptionsError({
        field: `stop[${i}]`,
        detail: `expected a string, got ${typeof s}`,
      });
    }
  });
  return list;
}

export class IncrementalDetokenizer {
  /** Generated token ids so far (the stop token included). */
  readonly tokenIds: number[] = [];
  readonly stop: readonly string[];
  readonly minTokens: number;
  readonly includeStopStrInOutput: boolean;

  readonly #stream: TokenDecodeStream;
  /** Characters (code points) held back from the streamed text while a stop string may be forming. */
  readonly #stopBufferLength: number;
  /** UTF-16 length of the longest stop string: how much old text a stop search needs to see. */
  readonly #stopSearchUnits: number;
  readonly #addedTokens: ReadonlyMap<number, { content: string }> | undefined;
  #lastSpecial = false;

  // The text is kept as the streamed part (chunks, never read per token) and the not-yet-streamed part
  // (short: the hold-back and what arrived since the last delta), so that no per-token step copies the
  // whole text (a growing string that is searched or sliced is flattened by V8 every time).
  readonly #streamed: string[] = [];
  #streamedLength = 0;
  #pending = "";
  /** The last `#stopSearchUnits` UTF-16 units of the text, for the stop search. */
  #tail = "";

  constructor(tokenizer: Tokenizer, options: DetokenizerOptions) {
    this.stop = normalizeStop(options.stop);
    this.minTokens = options.minTokens ?? 0;
    this.includeStopStrInOutput = options.includeStopStrInOutput ?? false;
    this.#stopBufferLength =
      this.stop.length > 0 && !this.includeStopStrInOutput
        ? Math.max(...this.stop.map(codePointLength)) - 1
        : 0;
    this.#stopSearchUnits = this.stop.length > 0 ? Math.max(...this.stop.map((s) => s.length)) : 0;
    const skipSpecialTokens = options.skipSpecialTokens ?? true;
    this.#stream = tokenizer.createDecodeStream(options.promptTokenIds, { skipSpecialTokens });
    // FastIncrementalDetokenizer: without spaces between special tokens, a run of added tokens is
    // written as their raw contents.
    const spaces = skipSpecialTokens || (options.spacesBetweenSpecialTokens ?? true);
    if (!spaces && tokenizer.addedTokens.size > 0) this.#addedTokens = tokenizer.addedTokens;
  }

  get numOutputTokens(): number {
    return this.tokenIds.length;
  }

  /** All text so far (after stop-string truncation). */
  get outputText(): string {
    if (this.#streamed.length > 1) this.#streamed.splice(0, this.#streamed.length, this.#streamed.join(""));
    return (this.#streamed[0] ?? "") + this.#pending;
  }

  #decodeNext(tokenId: number): string {
    let text = this.#stream.step(tokenId);
    const added = this.#addedTokens;
    if (added !== undefined) {
      const special = added.get(tokenId);
      const isSpecial = special !== undefined;
      if (isSpecial && this.#lastSpecial) text = special.content;
      this.#lastSpecial = isSpecial;
    }
    return text;
  }

  /**
   * Decodes one engine output's new tokens and checks the stop strings (BaseIncrementalDetokenizer.update).
   * `stopTerminated`: the engine finished with STOP (EOS or a stop token id), whose last token is then
   * left out of the text unless stop strings are included. `engineFinished`: the engine ended the request
   * with this output, so text held back for an unfinished character is flushed. Returns the matched stop
   * string, or null.
   */
  update(newTokenIds: readonly number[], stopTerminated: boolean, engineFinished = false): string | null {
    if (newTokenIds.length === 0 && !engineFinished) return null;
    let ids = newTokenIds;
    let skippedStopTokenId: number | undefined;
    if (stopTerminated && !this.includeStopStrInOutput && ids.length > 0) {
      skippedStopTokenId = ids[ids.length - 1];
      ids = ids.slice(0, -1);
    }
    let added = "";
    // Length of `added` before the text that is searched for stop strings.
    let stopCheckOffset = 0;
    for (const tokenId of ids) {
      this.tokenIds.push(tokenId);
      added += this.#decodeNext(tokenId);
      // min_tokens (vllm#22014): text of the first min_tokens tokens is never searched.
      if (this.minTokens && this.numOutputTokens <= this.minTokens) stopCheckOffset = added.length;
    }
    if (skippedStopTokenId !== undefined) this.tokenIds.push(skippedStopTokenId);
    if (engineFinished) {
      added += this.#stream.flush();
      if (this.minTokens && this.numOutputTokens <= this.minTokens) stopCheckOffset = added.length;
    }
    if (added === "") return null;
    const tailBefore = this.#tail;
    const lengthBefore = this.#streamedLength + this.#pending.length;
    this.#pending += added;
    if (this.stop.length === 0) return null;
    this.#tail = (tailBefore + added).slice(-this.#stopSearchUnits);
    if (this.numOutputTokens <= this.minTokens) return null;
    // check_stop_strings over the old tail and the new text (the search never reaches further back).
    const window = tailBefore + added;
    const match = checkStopStrings(
      window,
      added.length - stopCheckOffset,
      this.stop,
      this.includeStopStrInOutput,
    );
    if (match === null) return null;
    if (match.truncateTo !== -1) {
      // Never before the streamed part: the hold-back kept any stop string's start unstreamed.
      const at = lengthBefore - tailBefore.length + match.truncateTo;
      this.#pending = this.#pending.slice(0, Math.max(0, at - this.#streamedLength));
      this.#tail = "";
    }
    return match.stop;
  }

  /** The text not streamed yet (get_next_output_text with delta=True); all of it once `finished`. */
  nextTextDelta(finished: boolean): string {
    const pending = this.#pending;
    if (pending === "") return "";
    const buffer = finished ? 0 : this.#stopBufferLength;
    const cut = buffer === 0 ? pending.length : codePointsBack(pending, buffer);
    if (cut === 0) return "";
    const delta = pending.slice(0, cut);
    this.#pending = pending.slice(cut);
    this.#streamed.push(delta);
    this.#streamedLength += delta.length;
    return delta;
  }
}
