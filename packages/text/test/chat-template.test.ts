import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type ChatMessage, ChatTemplateError, CompiledChatTemplate } from "../src/index.js";
import { qwen3 } from "./helpers.js";

// Rendered with real Jinja2 in transformers' setup by fixtures/chat-templates/generate.py (see its provenance).
interface Case {
  name: string;
  messages: ChatMessage[];
  tools?: Record<string, unknown>[];
  documents?: Record<string, unknown>[];
  add_generation_prompt?: boolean;
  continue_final_message?: boolean;
  template_variables?: Record<string, unknown>;
  expected?: string;
  expectedError?: string;
  promptTokenIds?: number[];
}
const fixtures = JSON.parse(
  readFileSync(new URL("./fixtures/chat-templates/cases.json", import.meta.url), "utf8"),
) as {
  qwen3: Case[];
  synthetic: { name: string; template: string; specialTokens: Record<string, string>; cases: Case[] }[];
};

const options = (c: Case) => ({
  addGenerationPrompt: c.add_generation_prompt ?? false,
  continueFinalMessage: c.continue_final_message ?? false,
  tools: c.tools ?? null,
  documents: c.documents ?? null,
  templateVariables: c.template_variables ?? {},
});

describe("Qwen3's chat template renders as transformers' apply_chat_template (Jinja2 fixtures)", () => {
  const tok = qwen3();
  for (const c of fixtures.qwen3) {
    it(c.name, async () => {
      expect(tok.applyChatTemplate(c.messages, options(c))).toBe(c.expected);
      const chat = await tok.encodeChat(c.messages, options(c));
      expect(chat.prompt).toBe(c.expected);
      expect(chat.promptTokenIds).toEqual(c.promptTokenIds);
    });
  }
});

describe("chat-template features against Jinja2 (fixtures)", () => {
  for (const t of fixtures.synthetic) {
    const template = new CompiledChatTemplate(t.template);
    for (const c of t.cases) {
      it(`${t.name}: ${c.name}`, () => {
        const render = () => template.render(c.messages, options(c), t.specialTokens);
        if (c.expectedError !== undefined) {
          expect(render).toThrow(ChatTemplateError);
          expect(render).toThrow(c.expectedError);
        } else {
          expect(render()).toBe(c.expected);
        }
      });
    }
  }
});

describe("chat-template errors", () => {
  it("a model without a chat template, a template that does not parse, a missing named template", () => {
    expect(() => new CompiledChatTemplate(null).render([], {}, {})).toThrow(/no chat_template/);
    try {
      new CompiledChatTemplate("{% if %}");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ChatTemplateError);
      expect((error as ChatTemplateError).reason).toBe("parse");
      expect((error as ChatTemplateError).code).toBe("CHAT_TEMPLATE");
    }
    expect(() =>
      qwen3().applyChatTemplate([{ role: "user", content: "x" }], { chatTemplateName: "tool_use" }),
    ).toThrow(/no chat template named "tool_use"/);
    expect(() =>
      qwen3().applyChatTemplate([{ role: "user", content: "x" }], {
        addGenerationPrompt: true,
        continueFinalMessage: true,
      }),
    ).toThrow(/cannot be used together/);
  });

  it("uses a template given with the request", () => {
    const text = qwen3().applyChatTemplate([{ role: "user", content: "x" }], {
      chatTemplate: "{{ eos_token }}{{ messages[0].content }}{{ extra }}",
      templateVariables: { extra: "!" },
    });
    expect(text).toBe("<|im_end|>x!");
  });
});
