// Every error this package throws. They extend the project's one base class (re-exported by the
// client) and never cross threads: tokenizing, rendering and detokenizing run on the caller's thread.
import { VllmEngineCoreError } from "@vllm-engine-core/client";

/** A model directory could not be loaded as a tokenizer: a file is missing, unreadable or malformed. */
export class TokenizerLoadError extends VllmEngineCoreError {
  override readonly name = "TokenizerLoadError";
  readonly code = "TOKENIZER_LOAD" as const;
  /** The file (or directory) that could not be used. */
  readonly path: string;
  readonly detail: string;
  constructor(options: { path: string; detail: string }) {
    super(
      `Cannot load the tokenizer from ${options.path}: ${options.detail}. ` +
        "Point the loader at a model directory with a Hugging Face tokenizer.json (and tokenizer_config.json).",
    );
    this.path = options.path;
    this.detail = options.detail;
  }
}

/** A chat template is missing, does not parse, or raised while rendering (`raise_exception`). */
export class ChatTemplateError extends VllmEngineCoreError {
  override readonly name = "ChatTemplateError";
  readonly code = "CHAT_TEMPLATE" as const;
  readonly reason: "missing" | "parse" | "render";
  readonly detail: string;
  constructor(options: { reason: "missing" | "parse" | "render"; detail: string }) {
    const hint =
      options.reason === "missing"
        ? "The tokenizer config has no chat_template (base models have none): pass a template explicitly or send a plain completion prompt."
        : options.reason === "parse"
          ? "Fix the template's Jinja syntax."
          : "The template rejected these messages; change the messages (roles, order, content) to what the template accepts.";
    super(`Chat template ${options.reason} error: ${options.detail}. ${hint}`);
    this.reason = options.reason;
    this.detail = options.detail;
  }
}

/** Options given to the text layer (stop strings, detokenizer settings) are not usable. */
export class InvalidTextOptionsError extends VllmEngineCoreError {
  override readonly name = "InvalidTextOptionsError";
  readonly code = "INVALID_TEXT_OPTIONS" as const;
  readonly field: string;
  readonly detail: string;
  constructor(options: { field: string; detail: string }) {
    super(`Invalid text option \`${options.field}\`: ${options.detail}. Fix the option and try again.`);
    this.field = options.field;
    this.detail = options.detail;
  }
}
