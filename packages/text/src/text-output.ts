// Engine outputs of one request turned into text deltas: the per-request part of vLLM's
// OutputProcessor.process_outputs and RequestState.make_request_output (vllm/v1/engine/output_processor.py)
// in DELTA mode. A stop string found in the text finishes the request with STOP and the string as
// `stop_reason`; when the engine had not finished it, it must be aborted there (`abortEngine`).
import { type EngineCoreOutput, FinishReason } from "@vllm-engine-core/client";
import { type DetokenizerOptions, IncrementalDetokenizer } from "./detokenizer.js";
import type { Tokenizer } from "./tokenizer.js";

/** The sampling parameters the text layer reads (camelCase, as in the client's `SamplingParams`). */
export interface TextSamplingParams {
  stop?: string | readonly string[] | null | undefined;
  includeStopStrInOutput?: boolean | undefined;
  minTokens?: number | undefined;
  skipSpecialTokens?: boolean | undefined;
  spacesBetweenSpecialTokens?: boolean | undefined;
  /** `false`: no text at all, stop strings ignored (vLLM skips detokenization). */
  detokenize?: boolean | undefined;
  /** The rest of the request's sampling parameters, which the text layer does not read. */
  [other: string]: unknown;
}

/** What the text layer needs of a request: its id, prompt and sampling parameters. */
export interface TextRequest {
  requestId: string;
  promptTokenIds: readonly number[];
  samplingParams?: TextSamplingParams | null | undefined;
}

/** One engine output as text. */
export interface TextDelta {
  requestId: string;
  /** Text added by this output, or by every output merged into it ("" while text is held back). */
  text: string;
  /**
   * The output's new token ids, unchanged (vLLM's `CompletionOutput.token_ids` in DELTA mode); when merged,
   * every merged output's, in order.
   */
  tokenIds: readonly number[];
  /** Set on the last delta: the engine's reason, or STOP when a stop string matched. */
  finishReason: FinishReason | null;
  /** The stop token id or stop string that finished the request (null otherwise). */
  stopReason: number | string | null;
  finished: boolean;
  /** The request finished here (a stop string) while the engine still runs it: it must be aborted. */
  abortEngine: boolean;
  /** The engine output behind this delta (logprobs, prefill stats, timing...); the last one when merged. */
  output: EngineCoreOutput;
  /**
   * Every engine output merged into this delta, oldest first, when there are several (a stream interval > 1:
   * TextStreamOptions); absent when the delta is one output's.
   */
  outputs?: readonly EngineCoreOutput[];
}

export function detokenizerOptions(request: TextRequest): DetokenizerOptions {
  const sp = request.samplingParams ?? {};
  return {
    promptTokenIds: request.promptTokenIds,
    stop: sp.stop,
    includeStopStrInOutput: sp.includeStopStrInOutput,
    minTokens: sp.minTokens,
    skipSpecialTokens: sp.skipSpecialTokens,
    spacesBetweenSpecialTokens: sp.spacesBetweenSpecialTokens,
  };
}

export class TextOutputProcessor {
  readonly requestId: string;
  /** null when the request asked for no detokenization. */
  readonly detokenizer: IncrementalDetokenizer | null;
  #finished = false;

  constructor(tokenizer: Tokenizer, request: TextRequest) {
    this.requestId = request.requestId;
    this.detokenizer =
      request.samplingParams?.detokenize === false
        ? null
        : new IncrementalDetokenizer(tokenizer, detokenizerOptions(request));
  }

  /** True once a finished delta was returned; later outputs are ignored, as vLLM ignores them. */
  get finished(): boolean {
    return this.#finished;
  }

  /** The request's text so far (all of it once finished). */
  get text(): string {
    return this.detokenizer?.outputText ?? "";
  }

  /** Turns one engine output into a delta; null for an output after the request finished. */
  process(output: EngineCoreOutput): TextDelta | null {
    if (this.#finished) return null;
    const engineFinishReason = output.finishReason ?? null;
    let finishReason: FinishReason | null = engineFinishReason;
    let stopReason = output.stopReason ?? null;
    const detokenizer = this.detokenizer;
    if (detokenizer !== null) {
      const stopString = detokenizer.update(
        output.newTokenIds,
        engineFinishReason === FinishReason.STOP,
        engineFinishReason !== null,
      );
      if (stopString !== null) {
        finishReason = FinishReason.STOP;
        stopReason = stopString;
      }
    }
    const finished = finishReason !== null;
    this.#finished = finished;
    return {
      requestId: this.requestId,
      text: detokenizer === null ? "" : detokenizer.nextTextDelta(finished),
      tokenIds: output.newTokenIds,
      finishReason,
      stopReason: finished ? stopReason : null,
      finished,
      abortEngine: finished && engineFinishReason === null,
      output,
    };
  }
}
