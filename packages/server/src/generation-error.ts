// A request the engine finished with finish reason ERROR (it failed inside the engine: a grammar that did
// not compile, a preprocessing failure, a KV-transfer failure) is no completion. vLLM's server turns it into
// `GenerationError("Internal server error")` (vllm/entrypoints/openai/generate/base/serving.py
// `_raise_if_error`, vllm/entrypoints/openai/engine/protocol.py): HTTP 500 InternalServerError before a
// response started; in a stream, one `data: {"error": …}` event and `data: [DONE]` instead of the finishing
// chunk (chat_completion/serving.py and completion/serving.py stream generators).
import { type EngineCoreOutput, FinishReason } from "@vllm-engine-core/client";
import { type TextDelta, TextOutputProcessor } from "@vllm-engine-core/text";
import { OpenAIApiError } from "./errors.js";

/** vLLM's GenerationError: status 500, type InternalServerError, message "Internal server error". */
export function generationError(): OpenAIApiError {
  return new OpenAIApiError(500, "InternalServerError", "Internal server error");
}

/**
 * A text processor whose delta throws `generationError()` where the engine finished the request with ERROR:
 * the read of the text stream rejects with it. Checked here rather than in a wrapping stream, which would
 * add an async step (a promise and a microtask) to every token of every stream.
 */
export class CheckedOutputProcessor extends TextOutputProcessor {
  override process(output: EngineCoreOutput): TextDelta | null {
    const delta = super.process(output);
    if (delta !== null && delta.finishReason === FinishReason.ERROR) throw generationError();
    return delta;
  }
}
