// One chat request's tool-calling and reasoning setup, the hook chat.ts calls before rendering: the
// request's tools checked against the server's flags, the messages and tools as the template sees them,
// what the sampling parameters gain (a JSON-schema constraint for a forced tool choice, special tokens
// kept for the parser: vLLM's `adjust_request`), and the output parsers' configuration.
import type { SamplingParamsInit } from "@vllm-engine-core/client";
import type { ChatMessage } from "@vllm-engine-core/text";
import type { ChatOutputConfig } from "./chat-output.js";
import type { ServerContext } from "./context.js";
import { type Body, optBool } from "./params.js";
import {
  checkToolServing,
  templateMessages,
  templateTools,
  toolChoiceSchema,
  toolRequestOf,
} from "./tool-calls.js";

export interface ChatParsing {
  messages: ChatMessage[];
  templateTools: Record<string, unknown>[] | undefined;
  templateVariables: Record<string, unknown> | undefined;
  /** Overrides for the request's sampling parameters. */
  sampling: Partial<SamplingParamsInit>;
  output: ChatOutputConfig;
  /**
   * The engine request's reasoning fields, as vLLM's chat endpoint sets them (the engine applies a
   * structured-output grammar only once the reasoning ended): `reasoning_ended` true when reasoning is not
   * included, else whether the prompt already closed it (with a reasoning parser), and the template
   * kwargs for the engine-side reasoning parser.
   */
  engineFields(promptTokenIds: readonly number[]): {
    reasoningEnded?: boolean;
    reasoningParserKwargs?: Record<string, unknown>;
  };
}

export function chatParsing(
  ctx: ServerContext,
  body: Body,
  messages: ChatMessage[],
  templateVariables: Record<string, unknown> | undefined,
): ChatParsing {
  const request = toolRequestOf(body);
  checkToolServing(request, ctx.toolServing);
  const includeReasoning = optBool(body, "include_reasoning") ?? true;

  // `reasoning_effort` reaches the template, and turns thinking on or off unless the request's
  // chat_template_kwargs say (ChatCompletionRequest.build_chat_params).
  let variables = templateVariables;
  const effort = body.reasoning_effort;
  if (typeof effort === "string") {
    variables = { reasoning_effort: effort, ...variables };
    if (!(templateVariables && "enable_thinking" in templateVariables))
      variables.enable_thinking = effort !== "none";
  }

  const toolParser = ctx.toolServing.toolParser;
  const sampling: Partial<SamplingParamsInit> = {};
  if (toolParser !== undefined && request.toolChoice !== "none") {
    if (toolParser.supportsRequiredAndNamed) {
      const schema = toolChoiceSchema(request);
      // A forced choice overrides `response_format` (vLLM sets `response_format = None`).
      if (schema !== undefined) sampling.structuredOutputs = { json: schema };
    }
    if (toolParser.keepSpecialTokens && request.tools !== undefined) sampling.skipSpecialTokens = false;
  }

  const reasoning = ctx.reasoningParser?.session(ctx.tokenizer, variables ?? {});
  return {
    engineFields: (promptTokenIds) => {
      const kwargs = reasoning ? { reasoningParserKwargs: { chat_template_kwargs: variables ?? {} } } : {};
      if (!includeReasoning) return { reasoningEnded: true, ...kwargs };
      if (reasoning) return { reasoningEnded: reasoning.isReasoningEnd(promptTokenIds), ...kwargs };
      return {};
    },
    messages: templateMessages(messages),
    templateTools: request.tools ? templateTools(request.tools) : undefined,
    templateVariables: variables,
    sampling,
    output: {
      reasoning,
      toolParser,
      request,
      includeReasoning,
    },
  };
}
