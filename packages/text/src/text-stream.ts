// An EngineCoreOutputStream read as text. When a stop string finishes the request before the engine does,
// the engine stream is ended at once with its `finish`: the request counts as finished with stop
// (metrics, timings) and is aborted on the engine (vLLM's output processor records the finish, returns it
// in `reqs_to_abort` and AsyncLLM aborts it in EngineCore); nothing after it is read.
import type { EngineCoreOutput, EngineCoreOutputStream } from "@vllm-engine-core/client";
import { type TextDelta, TextOutputProcessor, type TextRequest } from "./text-output.js";
import type { Tokenizer } from "./tokenizer.js";

export class TextStream implements AsyncIterableIterator<TextDelta> {
  readonly requestId: string;
  readonly processor: TextOutputProcessor;
  readonly #outputs: EngineCoreOutputStream;
  #done = false;

  constructor(outputs: EngineCoreOutputStream, processor: TextOutputProcessor) {
    this.requestId = outputs.requestId;
    this.#outputs = outputs;
    this.processor = processor;
  }

  /** The underlying engine stream (engine index, timestamps). */
  get outputs(): EngineCoreOutputStream {
    return this.#outputs;
  }

  async next(): Promise<IteratorResult<TextDelta>> {
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
): TextStream {
  return new TextStream(outputs, new TextOutputProcessor(tokenizer, request));
}
