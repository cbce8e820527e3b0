export { ByteLevelDecodeStream, ByteLevelVocab, isByteLevelDecoder } from "./byte-level.js";
export {
  type ChatMessage,
  type ChatTemplateOptions,
  CompiledChatTemplate,
  selectChatTemplate,
} from "./chat-template.js";
export {
  type DecodeFn,
  REPLACEMENT_CHARACTER,
  seedContext,
  type TokenDecodeStream,
  WindowDecodeStream,
  withoutBrokenEnd,
} from "./decode-stream.js";
export { type DetokenizerOptions, IncrementalDetokenizer } from "./detokenizer.js";
export { ChatTemplateError, InvalidTextOptionsError, TokenizerLoadError } from "./errors.js";
export {
  type AddedTokenEntry,
  type ModelFiles,
  type NamedChatTemplate,
  readModelFiles,
  type SpecialTokensMap,
} from "./model-files.js";
export { withModelStopTokens } from "./sampling.js";
export { checkStopStrings, codePointLength, codePointsBack, type StopMatch } from "./stop-strings.js";
export {
  detokenizerOptions,
  type TextDelta,
  TextOutputProcessor,
  type TextRequest,
  type TextSamplingParams,
} from "./text-output.js";
export { TextStream, type TextStreamOptions, textStream } from "./text-stream.js";
export {
  type ChatPrompt,
  type DecodeOptions,
  type EncodeOptions,
  type GenerationDefaults,
  Tokenizer,
  type TokenizerOptions,
} from "./tokenizer.js";
