// Chat templates rendered with @huggingface/jinja the way transformers' `apply_chat_template` renders
// them with Jinja2 (transformers/utils/chat_template_utils.py, `_compile_jinja_template` and
// `render_jinja_template`): trim_blocks and lstrip_blocks, `raise_exception`, `strftime_now`, a `tojson`
// without HTML escaping (all built into @huggingface/jinja), and the context `messages`, `tools`,
// `documents`, `add_generation_prompt`, the named special tokens, then the caller's extra variables.
import { Template } from "@huggingface/jinja";
import { ChatTemplateError } from "./errors.js";
import type { NamedChatTemplate, SpecialTokensMap } from "./model-files.js";

/** A chat message as the template sees it (OpenAI-style; extra keys such as `tool_calls` pass through). */
export interface ChatMessage {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

export interface ChatTemplateOptions {
  /** Append the assistant header so the model answers (`add_generation_prompt`). Default false. */
  addGenerationPrompt?: boolean;
  /**
   * Leave the last message open so the model continues it (`continue_final_message`); cannot be used with
   * `addGenerationPrompt`.
   */
  continueFinalMessage?: boolean;
  /** Tool JSON schemas (`tools`), passed through to the template. */
  tools?: readonly Record<string, unknown>[] | null;
  /** RAG documents (`documents`), passed through to the template. */
  documents?: readonly Record<string, unknown>[] | null;
  /** Extra template variables (`chat_template_kwargs`, e.g. `enable_thinking`); they override the special tokens. */
  templateVariables?: Record<string, unknown>;
  /** A template to use instead of the model's. */
  chatTemplate?: string;
  /** Which of the model's named templates to use (default: "tool_use" with tools if present, else "default"). */
  chatTemplateName?: string;
}

/** transformers' `get_chat_template`: one template, or a named one from a list. */
export function selectChatTemplate(
  templates: readonly NamedChatTemplate[],
  options: { name: string | undefined; hasTools: boolean },
): string | null {
  if (templates.length === 0) return null;
  const byName = (name: string) => templates.find((t) => t.name === name)?.template;
  if (options.name !== undefined) {
    const named = byName(options.name);
    if (named === undefined) {
      throw new ChatTemplateError({
        reason: "missing",
        detail: `the model has no chat template named "${options.name}" (it has ${templates.map((t) => t.name).join(", ")})`,
      });
    }
    return named;
  }
  if (templates.length === 1 && templates[0]!.name === "default") return templates[0]!.template;
  if (options.hasTools && byName("tool_use") !== undefined) return byName("tool_use")!;
  const fallback = byName("default");
  if (fallback === undefined) {
    throw new ChatTemplateError({
      reason: "missing",
      detail: `the model has several chat templates (${templates.map((t) => t.name).join(", ")}) and none is named "default"`,
    });
  }
  return fallback;
}

// transformers appends this tag to the final message to find where it ends in the rendered text.
const CONTINUE_FINAL_MESSAGE_TAG = "CONTINUE_FINAL_MESSAGE_TAG ";

export class CompiledChatTemplate {
  readonly #template: Template | null;
  readonly source: string | null;

  constructor(source: string | null) {
    this.source = source;
    if (source === null) {
      this.#template = null;
      return;
    }
    try {
      this.#template = new Template(source);
    } catch (error) {
      throw new ChatTemplateError({ reason: "parse", detail: (error as Error).message });
    }
  }

  render(messages: readonly ChatMessage[], options: ChatTemplateOptions, special: SpecialTokensMap): string {
    if (this.#template === null) {
      throw new ChatTemplateError({
        reason: "missing",
        detail: "the tokenizer config defines no chat_template and none was given",
      });
    }
    const addGenerationPrompt = options.addGenerationPrompt ?? false;
    const continueFinal = options.continueFinalMessage ?? false;
    if (continueFinal && addGenerationPrompt) {
      throw new ChatTemplateError({
        reason: "render",
        detail: "continue_final_message and add_generation_prompt cannot be used together",
      });
    }
    let chat: ChatMessage[] = messages as ChatMessage[];
    let finalText: string | undefined;
    if (continueFinal) ({ chat, finalText } = tagFinalMessage(messages));
    let rendered: string;
    try {
      rendered = this.#template.render({
        ...special,
        ...(options.templateVariables ?? {}),
        messages: chat,
        tools: options.tools ?? null,
        documents: options.documents ?? null,
        add_generation_prompt: addGenerationPrompt,
      });
    } catch (error) {
      throw new ChatTemplateError({ reason: "render", detail: (error as Error).message });
    }
    return finalText === undefined ? rendered : cutAfterFinalMessage(rendered, finalText);
  }
}

/** render_jinja_template with continue_final_message: mark the end of the last message's text. */
function tagFinalMessage(messages: readonly ChatMessage[]): { chat: ChatMessage[]; finalText: string } {
  const chat = structuredClone(messages) as ChatMessage[];
  const last = chat[chat.length - 1];
  if (last === undefined || last.content == null) {
    throw new ChatTemplateError({
      reason: "render",
      detail: 'continue_final_message is set but the final message has no "content" to continue',
    });
  }
  if (typeof last.content === "string") {
    const finalText = last.content;
    last.content = last.content + CONTINUE_FINAL_MESSAGE_TAG;
    return { chat, finalText };
  }
  if (Array.isArray(last.content)) {
    for (let i = last.content.length - 1; i >= 0; i--) {
      const block = last.content[i] as { text?: unknown };
      if (block !== null && typeof block === "object" && typeof block.text === "string") {
        const finalText = block.text;
        block.text = block.text + CONTINUE_FINAL_MESSAGE_TAG;
        return { chat, finalText };
      }
    }
  }
  throw new ChatTemplateError({
    reason: "render",
    detail: "continue_final_message is set but the final message has no text to continue",
  });
}

function cutAfterFinalMessage(rendered: string, finalText: string): string {
  const tag = CONTINUE_FINAL_MESSAGE_TAG.trim();
  if (!rendered.includes(finalText.trim()) || !rendered.includes(tag)) {
    throw new ChatTemplateError({
      reason: "render",
      detail: "continue_final_message is set but the final message does not appear in the rendered chat",
    });
  }
  const at = rendered.lastIndexOf(tag);
  if (rendered.slice(at, at + CONTINUE_FINAL_MESSAGE_TAG.length) === CONTINUE_FINAL_MESSAGE_TAG) {
    return rendered.slice(0, at);
  }
  return rendered.slice(0, at).trimEnd();
}
