// An EngineCoreOutputStream read as text. When a stop string finishes the request before the engine does,
// the engine stream is ended at once with its `finish`: the request counts as finished with stop
// (metrics, timings) and is aborted on the engine (vLLM's output processor records the finish, returns it
// in `reqs_to_abort` and AsyncLLM aborts it in EngineCore); nothing after it is read.
//
// With a stream interval N > 1 (vLLM's `--stream-interval` and request `stream_interval`), deltas are merged
// as vLLM's RequestState.make_request_output merges them: the first delta goes out at once, then one delta per
// N or more new tokens, and the last one (finished) at once.
import type { EngineCoreOutput, EngineCoreOutputStream } from "@vllm-engine-core/client";
import { InvalidTextOptionsError } from "./errors.js";
import { type TextDelta, TextOutputProcessor, type TextRequest } from "./text-output.js";
import type { Tokenizer } from "./tokenizer.js";

export interface TextStreamOptions {
  /**
   * Tokens per delta (vLLM's stream_interval, default 1: a delta per engine output). The first delta and the
   * finished one are never held; merged deltas list their engine outputs in `outputs`.
   */
  streamInterval?: number | undefined;
}

export class TextStream implements AsyncIterableIterator<TextDelta> {
  readonly requestId: string;
  readonly processor: TextOutputProcessor;
  readonly #outputs: EngineCoreOutputStream;
  readonly #interval: number;
  #done = false;
  /** A delta has been handed out (vLLM's `sent_tokens_offset > 0`): later ones wait for the interval. */
  #sentOne = false;

  constructor(
    outputs: EngineCoreOutputStream,
    processor: TextOutputProcessor,
    options: TextStreamOptions = {},
  ) {
    this.requestId = outputs.requestId;
    this.#outputs = outputs;
    this.processor = processor;
    const interval = options.streamInterval ?? 1;
    if (!Number.isInteger(interval) || interval < 1) {
      // The request is already running: leaving it would keep it generating on the engine.
      void outputs.return().catch(() => {});
      throw new InvalidTextOptionsError({
        field: "streamInterval",
        detail: `must be an integer of at least 1 (vLLM's stream_interval), got ${interval}`,
      });
    }
    this.#interval = interval;
  }

  /** The underlying engine stream (engine index, timestamps). */
  get outputs(): EngineCoreOutputStream {
    return this.#outputs;
  }

  next(): Promise<IteratorResult<TextDelta>> {
    return this.#interval === 1 ? this.#nextDelta() : this.#nextMerged();
  }

  /**
   * Deltas merged until the interval's tokens are there (or the first, or the finished one). Texts, ids and
   * outputs are collected in arrays and joined once, when the merged delta goes out: linear in the tokens
   * whatever the interval (a request may ask for any).
   */
  async #nextMerged(): Promise<IteratorResult<TextDelta>> {
    const deltas: TextDelta[] = [];
    let tokens = 0;
    for (;;) {
      const result = await this.#nextDelta();
      if (result.done) {
        // The engine stream ended without a finished delta (aborted): what was merged still goes out.
        return deltas.length === 0 ? result : { value: this.#merge(deltas, tokens), done: false };
      }
      const delta = result.value;
      deltas.push(delta);
      tokens += delta.tokenIds.length;
      if (delta.finished || !this.#sentOne || tokens >= this.#interval) {
        return { value: this.#merge(deltas, tokens), done: false };
      }
    }
  }

  /** One delta for `deltas`: their text and ids joined, the last one's finish, every output listed. */
  #merge(deltas: readonly TextDelta[], tokens: number): TextDelta {
    // vLLM's `sent_tokens_offset == 0`: only a delta with tokens ends "the first goes out at once".
    if (tokens > 0) this.#sentOne = true;
    const last = deltas[deltas.length - 1]!;
    if (deltas.length === 1) return last;
    const tokenIds: number[] = [];
    let text = "";
    for (const d of deltas) {
      text += d.text;
      for (const id of d.tokenIds) tokenIds.push(id);
    }
    return { ...last, text, tokenIds, outputs: deltas.map((d) => d.output) };
  }

  async #nextDelta(): Promise<IteratorResult<TextDelta>> {
    if (this.#done) return { value: undefined, done: true };
    for (;;) {
      let result: IteratorResult<EngineCoreOutput>;
      try {
        result = await this.#outputs.next();
      } catch (error) {
        this.#done = true;
        throw error;
      }
      if (result.done) {
        this.#done = true;
        return { value: undefined, done: true };
      }
      let delta: TextDelta | null;
      try {
        delta = this.processor.process(result.value);
      } catch (error) {
        // A processor may refuse an output (the server's check of an engine ERROR finish): the stream ends.
        this.#done = true;
        throw error;
      }
      if (delta === null) continue;
      if (delta.finished) {
        this.#done = true;
        // A stop string matched: the request finished here (counted as a stop finish, not an abort), and
        // ending the engine stream sends ABORT for it.
        if (delta.abortEngine) this.#outputs.finish("stop");
      }
      return { value: delta, done: false };
    }
  }

  /** Leaving early (`break`, `return()`) ends the engine stream, which aborts the request on the engine. */
  async return(): Promise<IteratorResult<TextDelta>> {
    this.#done = true;
    await this.#outputs.return();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** Reads `outputs` (the stream of `client.call(request)`) as text deltas of `request`. */
export function textStream(
  tokenizer: Tokenizer,
  request: TextRequest,
  outputs: EngineCoreOutputStream,
  options: TextStreamOptions = {},
): TextStream {
  return new TextStream(outputs, new TextOutputProcessor(tokenizer, request), options);
}
