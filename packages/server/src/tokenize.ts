// vLLM's POST /tokenize and /detokenize (vllm/entrypoints/serve/tokenize/serving.py, protocol.py):
// `TokenizeCompletionRequest` {prompt, add_special_tokens=true} or `TokenizeChatRequest` {messages,
// add_generation_prompt=true, continue_final_message, add_special_tokens=false, chat_template_kwargs, tools},
// both with `return_token_strs`; the answer is {count, max_model_len, tokens, token_strs}.
import type { FastifyInstance } from "fastify";
import { detokenizeBodySchema, tokenizeBodySchema } from "./body-schema.js";
import { chatMessages } from "./chat.js";
import { checkModel, type ServerContext } from "./context.js";
import { badRequest } from "./errors.js";
import { asBody, optBool } from "./params.js";

export function tokenizeRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const tok = ctx.tokenizer;

  app.post("/tokenize", { schema: { body: tokenizeBodySchema } }, async (request) => {
    const body = asBody(request.body);
    checkModel(ctx, body);
    let tokens: number[];
    if (body.messages !== undefined) {
      const addGenerationPrompt = optBool(body, "add_generation_prompt") ?? true;
      const continueFinalMessage = optBool(body, "continue_final_message") ?? false;
      const kwargs = body.chat_template_kwargs;
      const tools = body.tools;
      ({ promptTokenIds: tokens } = await tok.encodeChat(chatMessages(body), {
        addGenerationPrompt: addGenerationPrompt && !continueFinalMessage,
        continueFinalMessage,
        addSpecialTokens: optBool(body, "add_special_tokens") ?? false,
        ...(kwargs && typeof kwargs === "object"
          ? { templateVariables: kwargs as Record<string, unknown> }
          : {}),
        ...(Array.isArray(tools) ? { tools: tools as Record<string, unknown>[] } : {}),
      }));
    } else if (typeof body.prompt === "string") {
      tokens = await tok.encode(body.prompt, {
        addSpecialTokens: optBool(body, "add_special_tokens") ?? true,
      });
    } else {
      throw badRequest("give `prompt` (a string) or `messages`", "prompt");
    }
    const strs = optBool(body, "return_token_strs") ?? false;
    return {
      count: tokens.length,
      max_model_len: ctx.maxModelLen,
      tokens,
      token_strs: strs ? tokens.map((id) => tok.idToToken(id) ?? null) : null,
    };
  });

  app.post("/detokenize", { schema: { body: detokenizeBodySchema } }, async (request) => {
    const body = asBody(request.body);
    checkModel(ctx, body);
    const tokens = body.tokens;
    if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t) && t >= 0)) {
      throw badRequest("`tokens` must be a list of non-negative integers", "tokens");
    }
    return { prompt: tok.decode(tokens as number[]) };
  });
}
