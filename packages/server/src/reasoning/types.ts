// The interface of a reasoning parser (`--reasoning-parser NAME`, registered in ./index.ts), after vLLM's
// `ReasoningParser` (vllm/reasoning/abs_reasoning_parsers.py). Like the tool parsers it works on text; token
// ids serve only to tell whether the prompt already closed the reasoning and to count reasoning tokens.

export interface ReasoningSplit {
  reasoning: string | null;
  content: string | null;
}

/** What one streamed text delta holds (either may be empty); `ended` once the reasoning closed in it. */
export interface ReasoningDelta {
  reasoning: string;
  content: string;
  ended: boolean;
}

export interface ReasoningStream {
  push(delta: string): ReasoningDelta;
  /** Text held back at the end of the stream (a possible start of a marker that never completed). */
  flush(): ReasoningDelta;
}

/** A parser configured for one request. */
export interface ReasoningSession {
  /** vLLM's `is_reasoning_end(prompt_token_ids)`: the prompt already closed the reasoning (no reasoning). */
  isReasoningEnd(tokenIds: readonly number[]): boolean;
  /** Non-streaming split of the whole output (vLLM's `extract_reasoning`). */
  extract(output: string): ReasoningSplit;
  stream(): ReasoningStream;
}

/** Looks up marker token ids in the model's vocabulary. */
export interface Vocabulary {
  tokenToId(token: string): number | undefined;
}

export interface ReasoningParser {
  readonly name: string;
  /** One request's parser; `chatTemplateKwargs` as the template got them (`enable_thinking`, …). */
  session(vocab: Vocabulary, chatTemplateKwargs: Readonly<Record<string, unknown>>): ReasoningSession;
}
