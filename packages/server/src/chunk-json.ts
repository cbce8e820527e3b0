// The JSON of the most frequent streamed chunk — a plain text delta, not the last, without logprobs — from
// a per-request template: only the text (and the usage, with `continuous_usage_stats`) is serialized per
// token instead of the whole chunk object. The bytes are exactly `JSON.stringify` of the chunk the generic
// path builds (same keys in the same order); at hundreds of streams the server spends its time per token.

export class TextChunkTemplate {
  readonly #head: string;
  readonly #tail: string;

  /**
   * `base` are the chunk's leading fields; `textKey` the choice's text field ("content" of the chat delta,
   * or the completion's "text"); `choiceTail` the choice's remaining fields.
   */
  private constructor(head: string, tail: string) {
    this.#head = head;
    this.#tail = tail;
  }

  /** `{...base, choices: [{index, delta: {content}, logprobs: null, finish_reason: null}], usage?}` */
  static chat(base: Record<string, unknown>, index = 0): TextChunkTemplate {
    const open = JSON.stringify(base).slice(0, -1);
    return new TextChunkTemplate(
      `${open},"choices":[{"index":${index},"delta":{"content":`,
      '},"logprobs":null,"finish_reason":null}]',
    );
  }

  /** `{...base, choices: [{index, text, logprobs: null, finish_reason: null, stop_reason: null}], usage?}` */
  static completion(base: Record<string, unknown>, index = 0): TextChunkTemplate {
    const open = JSON.stringify(base).slice(0, -1);
    return new TextChunkTemplate(
      `${open},"choices":[{"index":${index},"text":`,
      ',"logprobs":null,"finish_reason":null,"stop_reason":null}]',
    );
  }

  json(text: string): string {
    return `${this.#head}${JSON.stringify(text)}${this.#tail}}`;
  }

  /**
   * With `continuous_usage_stats`: the usage written from the two counts, in `streamUsage`'s key order
   * (no usage object built and serialized per token).
   */
  jsonWithUsage(text: string, promptTokens: number, completionTokens: number): string {
    return (
      `${this.#head}${JSON.stringify(text)}${this.#tail},"usage":{"prompt_tokens":${promptTokens},` +
      `"total_tokens":${promptTokens + completionTokens},"completion_tokens":${completionTokens}}}`
    );
  }
}
