// POST /v1/chat/completions, as vLLM's `OpenAIServingChat` (vllm/entrypoints/openai/chat_completion/
// serving.py `create_chat_completion`, `chat_completion_stream_generator`, `chat_completion_full_generator`).
import { FinishReason, finishReasonName, type SamplingParamsInit } from "@vllm-engine-core/client";
import { type ChatMessage, type TextDelta, withModelStopTokens } from "@vllm-engine-core/text";
import type { FastifyReply, FastifyRequest } from "fastify";
import { assistantMessage, ChatDeltaParser, hasOutputParser, parseOutput } from "./chat-output.js";
import { chatParsing } from "./chat-parsing.js";
import { TextChunkTemplate } from "./chunk-json.js";
import {
  disconnectSignal,
  nowSeconds,
  requestTarget,
  type ServerContext,
  streamUsage,
  usage,
} from "./context.js";
import { badRequest, toApiError } from "./errors.js";
import { checkParentSampling, mergeChoices, startChoices } from "./fan-out.js";
import { type ChatLogprobContent, chatLogprobs, deltaLogprobPositions } from "./logprobs.js";
import {
  asBody,
  type Body,
  checkLogprobs,
  choiceCount,
  optBool,
  optInt,
  promptLogprobsOf,
  resolveMaxTokens,
  samplingFromBody,
  sessionIdOf,
  streamIntervalOf,
  streamOptions,
} from "./params.js";
import { jsonWithMaps, type PromptScores, promptScores } from "./prompt-logprobs.js";
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
  const target = requestTarget(ctx, request, body, "chatcmpl");
  const n = choiceCount(body);
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
  const echo = optBool(body, "echo") ?? false;
  // `to_sampling_params`: with `echo`, the prompt is scored with `top_logprobs` unless `prompt_logprobs` says.
  const promptLogprobs = promptLogprobsOf(body, stream, tok.vocabSize) ?? (echo ? topLogprobs : undefined);
  const addGenerationPrompt = optBool(body, "add_generation_prompt") ?? true;
  // vLLM's `get_chat_request_role`: the response continues the last message's role without a generation prompt.
  const role = addGenerationPrompt ? "assistant" : messages.at(-1)!.role;
  // `echo`: the last message's content comes first when it has the response's role.
  const last = messages.at(-1)!;
  const echoed = echo && last.role === role && typeof last.content === "string" ? last.content : "";
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
    {
      ...sampling,
      ...parsing.sampling,
      maxTokens,
      ...(logprobs ? { logprobs: topLogprobs ?? 0 } : {}),
      ...(promptLogprobs !== undefined ? { promptLogprobs } : {}),
    },
    tok,
  );
  const id = target.id;
  const engineRequest = {
    ...target.engine,
    promptTokenIds,
    samplingParams,
    ...sessionIdOf(body, request.headers),
    ...parsing.engineFields(promptTokenIds),
  };
  checkParentSampling(engineRequest, n);
  const signal = disconnectSignal(reply);
  // n > 1: one engine request per choice (fan-out.ts); with n = 1 the request keeps the response's id.
  const choices = await startChoices(
    ctx,
    [engineRequest],
    n,
    signal,
    streamIntervalOf(body, stream, ctx.streamInterval),
  );
  const deltas = mergeChoices(choices);
  const base = { id, created: nowSeconds(), model: target.model };
  const shownTop = topLogprobs ?? 0;
  const output = parsing.output;
  // vLLM hides per-token metadata when the reasoning is hidden (it would leak the reasoning's tokens).
  const hideMetadata = !output.includeReasoning && hasOutputParser(output);
  const logprobsOf = (d: TextDelta): { content: ChatLogprobContent[] } | null => {
    if (!logprobs || hideMetadata) return null;
    const positions = deltaLogprobPositions(d);
    return positions === null
      ? null
      : { content: chatLogprobs(tok, positions, shownTop, target.tokensAsIds) };
  };
  const finishOf = (d: TextDelta) =>
    d.finishReason === null ? null : finishReasonName(d.finishReason ?? FinishReason.STOP);

  if (!stream) {
    const results = choices.map(() => ({
      text: "",
      completionTokens: 0,
      last: undefined as TextDelta | undefined,
      content: [] as ChatLogprobContent[],
    }));
    let scores: PromptScores | null = null;
    try {
      for await (const { choice, delta: d } of deltas) {
        const r = results[choice.index]!;
        r.text += d.text;
        r.completionTokens += d.tokenIds.length;
        const lp = logprobsOf(d);
        if (lp) r.content.push(...lp.content);
        // Every child scores the same prompt; the response has one `prompt_logprobs` (the first child's).
        const tensors = d.output.newPromptLogprobsTensors;
        if (choice.index === 0 && promptLogprobs !== undefined && tensors != null) {
          scores = promptScores(tok, tensors, promptLogprobs);
        }
        r.last = d;
      }
    } catch (error) {
      if (signal.aborted) return reply; // the client is gone: nobody to answer
      throw error;
    }
    const response = {
      ...base,
      object: "chat.completion",
      choices: choices.map((choice) => {
        const r = results[choice.index]!;
        // One parse per choice (vLLM keeps a parser per choice index).
        const { message, finishReason } = assistantMessage(
          output,
          parseOutput(output, r.text),
          (r.last ? finishOf(r.last) : null) ?? "stop",
        );
        const content =
          echoed === "" || message.content === null ? message.content : echoed + message.content;
        return {
          index: choice.index,
          message: { ...message, role, content },
          logprobs: logprobs && !hideMetadata ? { content: r.content } : null,
          finish_reason: finishReason,
          stop_reason: r.last?.stopReason ?? null,
        };
      }),
      // The prompt counts once, whatever `n` (vLLM's `chat_completion_full_generator`).
      usage: usage(
        promptTokenIds.length,
        results.reduce((sum, r) => sum + r.completionTokens, 0),
      ),
      prompt_logprobs: scores?.json ?? null,
    };
    if (scores === null) return response;
    return reply.type("application/json; charset=utf-8").send(jsonWithMaps(response));
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
  const chunkBase = { ...base, object: "chat.completion.chunk" };
  const textChunks = choices.map((c) => TextChunkTemplate.chat(chunkBase, c.index));
  // Per choice (vLLM's `previous_num_tokens`).
  const completionTokens = choices.map(() => 0);
  try {
    // The first chunk of each choice carries the role (vLLM: `DeltaMessage(role=role, content="")`, one
    // chunk per choice index), and with continuous_usage_stats the prompt's usage, no completion tokens yet
    // (chat_completion/serving.py).
    for (const choice of choices) {
      const first = chunk(
        [{ index: choice.index, delta: { role, content: "" }, logprobs: null, finish_reason: null }],
        continuousUsage ? { usage: streamUsage(promptTokenIds.length, 0) } : {},
      );
      if (!(await sse.send(first))) {
        await deltas.return?.();
        return reply;
      }
    }
    // `echo`: then the last message's content, once per choice.
    if (echoed !== "") {
      for (const choice of choices) {
        const content = {
          index: choice.index,
          delta: { content: echoed },
          logprobs: null,
          finish_reason: null,
        };
        if (!(await sse.send(chunk([content])))) {
          await deltas.return?.();
          return reply;
        }
      }
    }
    // Reasoning / tool calls: one parser per choice (vLLM's per-index parser state).
    const parsers = hasOutputParser(output)
      ? choices.map(() => new ChatDeltaParser(output, promptTokenIds))
      : undefined;
    for await (const { choice, delta: d } of deltas) {
      const i = choice.index;
      completionTokens[i]! += d.tokenIds.length;
      // vLLM's one skip ("chunked prefill case", before any parser): no text, no tokens, none before (the
      // count already includes this delta's). A token whose text is held back still gets its chunk, with
      // content "" (`DeltaMessage(content="")`).
      if (d.text === "" && completionTokens[i] === 0) continue;
      const lp = logprobsOf(d);
      const parser = parsers?.[i];
      if (parser !== undefined) {
        // Reasoning / tool calls: the parser decides what this delta sends (nothing while it holds text).
        const delta = parser.push(d.text, d.finished);
        if (delta === null && !d.finished) continue;
        const finish = finishOf(d);
        const u = continuousUsage ? streamUsage(promptTokenIds.length, completionTokens[i]!) : undefined;
        const parsed = {
          index: i,
          delta: delta ?? {},
          logprobs: lp,
          finish_reason: finish === null ? null : parser.finishReason(finish),
          ...(d.finished ? { stop_reason: d.stopReason } : {}),
        };
        if (!(await sse.send(chunk([parsed], u === undefined ? {} : { usage: u })))) break;
        continue;
      }
      if (!d.finished && lp === null) {
        // The common chunk: a text delta from the per-request template ("" while its text is held back).
        const json = continuousUsage
          ? textChunks[i]!.jsonWithUsage(d.text, promptTokenIds.length, completionTokens[i]!)
          : textChunks[i]!.json(d.text);
        // A closed connection ends the loop; leaving it aborts every choice's request on the engine.
        const sent = sse.sendJson(json);
        if (sent !== true && !(await sent)) break;
        continue;
      }
      const choiceJson = {
        index: i,
        // vLLM (no parser): `DeltaMessage(content=delta_text)`, also when the text is "" (the last chunk of
        // an EOS, a token held back with logprobs).
        delta: { content: d.text },
        logprobs: lp,
        finish_reason: finishOf(d),
        ...(d.finished ? { stop_reason: d.stopReason } : {}),
      };
      const u = continuousUsage ? streamUsage(promptTokenIds.length, completionTokens[i]!) : undefined;
      if (!(await sse.send(chunk([choiceJson], u === undefined ? {} : { usage: u })))) break;
    }
    if (sse.closed) return reply;
    if (includeUsage) {
      const total = completionTokens.reduce((sum, t) => sum + t, 0);
      await sse.send(chunk([], { usage: streamUsage(promptTokenIds.length, total) }));
    }
    await sse.done();
  } catch (error) {
    if (signal.aborted || sse.closed) return reply;
    // vLLM's streaming error: one `data: {"error": …}` event, then [DONE].
    await sse.send(toApiError(error).toBody());
    await sse.done();
  }
  return reply;
}
