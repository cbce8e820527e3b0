// The one interface every tool-call parser implements (one module per model format, registered by name in
// ./index.ts), after vLLM's `ToolParser` (vllm/tool_parsers/abstract_tool_parser.py): a whole-output
// `extract` for non-streaming responses and a stateful `stream` that turns text deltas into tool-call
// deltas. Parsers see text only, never token ids: the server's detokenizer hands them whatever text a step
// produced (one token, several, or a fragment of a multi-byte character held back until complete).

/** A tool as the request gives it (`{type: "function", function: {name, description, parameters}}`). */
export interface ToolDefinition {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** One parsed call: `arguments` is a JSON string, as OpenAI's `function.arguments`. */
export interface ParsedToolCall {
  name: string;
  arguments: string;
  /** A model-specific id when the format carries one (vLLM's `FunctionCall.id`); else the server makes one. */
  id?: string;
}

/** vLLM's `ExtractedToolCallInformation`. */
export interface ExtractedToolCalls {
  toolsCalled: boolean;
  toolCalls: ParsedToolCall[];
  /** Text outside the calls (null when there is none). */
  content: string | null;
}

/** vLLM's `DeltaToolCall`: the first delta of a call carries `id`, `type` and the name; later ones arguments. */
export interface DeltaToolCall {
  index: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

/** vLLM's `DeltaMessage` (the fields this server sends). */
export interface DeltaMessage {
  content?: string | null;
  reasoning?: string | null;
  tool_calls?: DeltaToolCall[];
}

/** The streaming side of one response: fed every text delta in order. */
export interface ToolCallStream {
  /** The next text delta; returns what to send for it, or null when nothing is ready yet. */
  push(delta: string): DeltaMessage | null;
  /**
   * Arguments of the last call that were parsed but not streamed yet, sent with the final chunk (vLLM's
   * `get_remaining_unstreamed_args`, appended by `finalize_generation`).
   */
  remainingArguments(): string;
  /** Text held back at the end of the stream (a possible start of markup that never completed). */
  flush?(): DeltaMessage | null;
}

export interface ToolParser {
  /** The `--tool-call-parser` name. */
  readonly name: string;
  /**
   * vLLM's `supports_required_and_named`: when true, `tool_choice` "required" and a named function are
   * served by constraining the output to JSON and parsing that JSON without this parser.
   */
  readonly supportsRequiredAndNamed: boolean;
  /**
   * The parser needs the tool-call markup tokens in the text (vLLM's `adjust_request` setting
   * `skip_special_tokens = False` when tools are given and `tool_choice` is not "none").
   */
  readonly keepSpecialTokens: boolean;
  extract(output: string, tools: readonly ToolDefinition[]): ExtractedToolCalls;
  stream(tools: readonly ToolDefinition[]): ToolCallStream;
  /** The parser for this model's vocabulary, when the format depends on it (Mistral's tokenizer versions). */
  forVocabulary?(vocab: { tokenToId(token: string): number | undefined }): ToolParser;
}
