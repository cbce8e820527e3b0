// POST /v1/chat/completions, as vLLM's `OpenAIServingChat` (vllm/entrypoints/openai/chat_completion/
// serving.py `create_chat_completion`, `chat_completion_stream_generator`, `chat_completion_full_generator`).
import { FinishReason, finishReasonName, type SamplingParamsInit } from "@vllm-engine-core/client";
import { type ChatMessage, type TextDelta, withModelStopTokens } from "@vllm-engine-core/text";
import type { FastifyReply, FastifyRequest } from "fastify";
import { assistantMessage, ChatDeltaParser, hasOutputParser, parseOutput } from "./chat-output.js";
import { chatParsing } from "./chat-parsing.js";
import { TextChunkTemplate } from "./chunk-json.js";
import {
  checkModel,
  disconnectSignal,
  nowSeconds,
  randomId,
  type ServerContext,
  startGeneration,
  usage,
} from "./context.js";
import { badRequest, toApiError } from "./errors.js";
import { type ChatLogprobContent, chatLogprobs, logprobPositions } from "./logprobs.js";
import {
  asBody,
  type Body,
  checkLogprobs,
  checkSingleChoice,
  optBool,
  optInt,
  resolveMaxTokens,
  samplingFromBody,
  streamOptions,
} from "./params.js";
import { SseWriter } from "./sse.js";

/**
 * Messages as the template gets them. Content parts are joined into a string the way vLLM does for a
 * "string" content-format template (vllm/entrypoints/chat_utils.py: text parts joined with "\n");
 * non-text parts need a multimodal model, which this server does not serve.
 */
export function chatMessages(body: Body): ChatMessage[] {
  const raw = body.messages;
  if (!Array.isArray(raw) || raw.length === 0) {
    throw badRequest("`messages` must be a non-empty list of messages", "messages");
  }
  return raw.map((m, i) => {
    if (typeof m !== "object" || m === null || typeof (m as Body).role !== "string") {
      throw badRequest(`messages[${i}] must be an object with a string \`role\``, "messages");
    }
    const message = { ...(m as Body) } as ChatMessage;
    const content = message.content;
    if (Array.isArray(content)) {
      const texts = content.map((part, j) => {
        const p = part as Body;
        if (typeof p === "string") return p;
        if (p?.type === "text" && typeof p.text === "string") return p.text;
        throw badRequest(
          `messages[${i}].content[${j}]: content part type ${JSON.stringify(p?.type)} is not supported (text only)`,
          "messages",
        );
      });
      message.content = texts.join("\n");
    } else if (content !== undefined && content !== null && typeof content !== "string") {
      throw badRequest(`messages[${i}].content must be a string or a list of content parts`, "messages");
    }
    return message;
  });
}

function templateObject(body: Body, key: string): Record<string, unknown> | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) throw badRequest(`\`${key}\` must be an object`, key);
  return v as Record<string, unknown>;
}

function templateList(body: Body, key: string): Record<string, unknown>[] | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw badRequest(`\`${key}\` must be a list`, key);
  return v as Record<string, unknown>[];
}

export async function chatCompletions(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  const tok = ctx.tokenizer;
  const body = asBody(request.body);
  checkModel(ctx, body);
  checkSingleChoice(body);
  const { stream, includeUsage, continuousUsage } = streamOptions(body);
  const messages = chatMessages(body);

  // ChatCompletionRequest: `logprobs: bool`, `top_logprobs: int` (check_logprobs validator).
  const logprobs = optBool(body, "logprobs") ?? false;
  const topLogprobs = optInt(body, "top_logprobs");
  if (topLogprobs !== undefined) {
    if (!logprobs) {
      throw badRequest("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");
    }
    checkLogprobs(topLogprobs, "top_logprobs");
  }
  const addGenerationPrompt = optBool(body, "add_generation_prompt") ?? true;
  const continueFinalMessage = optBool(body, "continue_final_message") ?? false;
  if (addGenerationPrompt && continueFinalMessage) {
    throw badRequest(
      "Cannot set both `continue_final_message` and `add_generation_prompt` to True.",
      "continue_final_message",
    );
  }
  const sampling = samplingFromBody(body, tok.generationDefaults);
  const requestedMax = optInt(body, "max_completion_tokens") ?? optInt(body, "max_tokens");
  const documents = templateList(body, "documents");
  const templateVariables = templateObject(body, "chat_template_kwargs");
  // Tools, tool_choice and reasoning: checked, the template's view, the output constraint, the parsers.
  const parsing = chatParsing(ctx, body, messages, templateVariables);
  const tools = parsing.templateTools;
  const chatTemplate = typeof body.chat_template === "string" ? body.chat_template : undefined;
  const addSpecialTokens = optBool(body, "add_special_tokens") ?? false;

  const { promptTokenIds } = await tok.encodeChat(parsing.messages, {
    addGenerationPrompt,
    continueFinalMessage,
    addSpecialTokens,
    ...(tools ? { tools } : {}),
    ...(documents ? { documents } : {}),
    ...(parsing.templateVariables ? { templateVariables: parsing.templateVariables } : {}),
    ...(chatTemplate ? { chatTemplate } : {}),
  });
  const maxTokens = resolveMaxTokens(
    requestedMax,
    tok.generationDefaults.maxTokens,
    promptTokenIds.length,
    ctx.maxModelLen,
  );
  const samplingParams: SamplingParamsInit = withModelStopTokens(
    { ...sampling, ...parsing.sampling, maxTokens, ...(logprobs ? { logprobs: topLogprobs ?? 0 } : {}) },
    tok,
  );
  const id = `chatcmpl-${randomId()}`;
  const signal = disconnectSignal(reply);
  const textStream = await startGeneration(
    ctx,
    { requestId: id, promptTokenIds, samplingParams, ...parsing.engineFields(promptTokenIds) },
    signal,
  );
  const base = { id, created: nowSeconds(), model: ctx.servedModelName };
  const shownTop = topLogprobs ?? 0;
  const output = parsing.output;
  // vLLM hides per-token metadata when the reasoning is hidden (it would leak the reasoning's tokens).
  const hideMetadata = !output.includeReasoning && hasOutputParser(output);
  const logprobsOf = (d: TextDelta): { content: ChatLogprobContent[] } | null => {
    if (!logprobs || hideMetadata) return null;
    const positions = logprobPositions(d.output);
    return positions === null ? null : { content: chatLogprobs(tok, positions, shownTop) };
  };
  const finishOf = (d: TextDelta) =>
    d.finishReason === null ? null : finishReasonName(d.finishReason ?? FinishReason.STOP);

  if (!stream) {
    let text = "";
    let completionTokens = 0;
    let last: TextDelta | undefined;
    const content: ChatLogprobContent[] = [];
    try {
      for await (const d of textStream) {
        text += d.text;
        completionTokens += d.tokenIds.length;
        const lp = logprobsOf(d);
        if (lp) content.push(...lp.content);
        last = d;
      }
    } catch (error) {
      if (signal.aborted) return reply; // the client is gone: nobody to answer
      throw error;
    }
    const { message, finishReason } = assistantMessage(
      output,
      parseOutput(output, text),
      (last ? finishOf(last) : null) ?? "stop",
    );
    return {
      ...base,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message,
          logprobs: logprobs && !hideMetadata ? { content } : null,
          finish_reason: finishReason,
          stop_reason: last?.stopReason ?? null,
        },
      ],
      usage: usage(promptTokenIds.length, completionTokens),
    };
  }

  const sse = new SseWriter(reply.raw, ctx.sseStats);
  reply.hijack();
  sse.open();
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    ...base,
    object: "chat.completion.chunk",
    choices,
    ...extra,
  });
  const textChunk = TextChunkTemplate.chat({ ...base, object: "chat.completion.chunk" });
  let completionTokens = 0;
  try {
    // The first chunk carries the role (vLLM: `DeltaMessage(role=role, content="")`).
    const first = chunk([
      { index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null },
    ]);
    if (!(await sse.send(first))) {
      await textStream.return();
      return reply;
    }
    const deltas = hasOutputParser(output) ? new ChatDeltaParser(output, promptTokenIds) : undefined;
    for await (const d of textStream) {
      completionTokens += d.tokenIds.length;
      const lp = logprobsOf(d);
      if (deltas !== undefined) {
        // Reasoning / tool calls: the parser decides what this delta sends (nothing while it holds text).
        const delta = deltas.push(d.text, d.finished);
        if (delta === null && !d.finished) continue;
        const finish = finishOf(d);
        const u = continuousUsage ? usage(promptTokenIds.length, completionTokens) : undefined;
        const parsed = {
          index: 0,
          delta: delta ?? {},
          logprobs: lp,
          finish_reason: finish === null ? null : deltas.finishReason(finish),
          ...(d.finished ? { stop_reason: d.stopReason } : {}),
        };
        if (!(await sse.send(chunk([parsed], u === undefined ? {} : { usage: u })))) break;
        continue;
      }
      if (d.text === "" && !d.finished && lp === null) continue;
      const choice = () => ({
        index: 0,
        delta: d.text === "" ? {} : { content: d.text },
        logprobs: lp,
        finish_reason: finishOf(d),
        ...(d.finished ? { stop_reason: d.stopReason } : {}),
      });
      const u = continuousUsage ? usage(promptTokenIds.length, completionTokens) : undefined;
      // A closed connection ends the loop; leaving it aborts the request on the engine.
      const sent =
        d.text !== "" && !d.finished && lp === null
          ? sse.sendJson(textChunk.json(d.text, u))
          : sse.send(chunk([choice()], u === undefined ? {} : { usage: u }));
      if (!(await sent)) break;
    }
    if (sse.closed) return reply;
    if (includeUsage) await sse.send(chunk([], { usage: usage(promptTokenIds.length, completionTokens) }));
    await sse.done();
  } catch (error) {
    if (signal.aborted || sse.closed) return reply;
    // vLLM's streaming error: one `data: {"error": …}` event, then [DONE].
    await sse.send(toApiError(error).toBody());
    await sse.done();
  }
  return reply;
}
