// POST /v1/completions, as vLLM's `OpenAIServingCompletion` (vllm/entrypoints/openai/completion/serving.py
// `create_completion`, `completion_stream_generator`, `request_output_to_completion_response`).
import { FinishReason, finishReasonName, type SamplingParamsInit } from "@vllm-engine-core/client";
import { type TextDelta, withModelStopTokens } from "@vllm-engine-core/text";
import type { FastifyReply, FastifyRequest } from "fastify";
import { TextChunkTemplate } from "./chunk-json.js";
import {
  disconnectSignal,
  nowSeconds,
  requestTarget,
  type ServerContext,
  startGeneration,
  usage,
} from "./context.js";
import { badRequest, toApiError } from "./errors.js";
import { type CompletionLogprobs, completionLogprobs, logprobPositions, pyLen } from "./logprobs.js";
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

/** vLLM's `CompletionRequest.max_tokens` default. */
const DEFAULT_COMPLETION_MAX_TOKENS = 16;

const isIdList = (v: unknown): v is number[] =>
  Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x));

/** `prompt`: text or token ids, or a list holding one of them (batches of several prompts are refused). */
async function promptTokenIds(ctx: ServerContext, body: Body): Promise<number[]> {
  let prompt = body.prompt;
  if (
    Array.isArray(prompt) &&
    prompt.length === 1 &&
    (typeof prompt[0] === "string" || isIdList(prompt[0]))
  ) {
    prompt = prompt[0];
  }
  if (typeof prompt === "string") {
    if (prompt === "") throw badRequest("`prompt` must not be empty", "prompt");
    return ctx.tokenizer.encode(prompt, { addSpecialTokens: optBool(body, "add_special_tokens") ?? true });
  }
  if (isIdList(prompt)) return prompt;
  if (Array.isArray(prompt) && prompt.length > 1) {
    throw badRequest("batched prompts are not supported: send one prompt per request", "prompt");
  }
  throw badRequest("`prompt` must be a string or a list of token ids", "prompt");
}

export async function completions(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  const tok = ctx.tokenizer;
  const body = asBody(request.body);
  const target = requestTarget(ctx, request, body, "cmpl");
  checkSingleChoice(body);
  for (const key of ["suffix", "echo"] as const) {
    if (body[key] !== undefined && body[key] !== null && body[key] !== false) {
      throw badRequest(`\`${key}\` is not supported`, key);
    }
  }
  const { stream, includeUsage, continuousUsage } = streamOptions(body);
  // CompletionRequest: `logprobs: int | None`, the number of top logprobs per token.
  const logprobs = optInt(body, "logprobs");
  if (logprobs !== undefined) checkLogprobs(logprobs, "logprobs");
  const sampling = samplingFromBody(body, tok.generationDefaults);
  const requestedMax =
    body.max_tokens === null ? undefined : (optInt(body, "max_tokens") ?? DEFAULT_COMPLETION_MAX_TOKENS);
  const prompt = await promptTokenIds(ctx, body);
  const maxTokens = resolveMaxTokens(
    requestedMax,
    tok.generationDefaults.maxTokens,
    prompt.length,
    ctx.maxModelLen,
  );
  const samplingParams: SamplingParamsInit = withModelStopTokens(
    { ...sampling, maxTokens, ...(logprobs !== undefined ? { logprobs } : {}) },
    tok,
  );
  const id = target.id;
  const signal = disconnectSignal(reply);
  const textStream = await startGeneration(
    ctx,
    { ...target.engine, promptTokenIds: prompt, samplingParams },
    signal,
  );
  const base = { id, object: "text_completion", created: nowSeconds(), model: target.model };
  const logprobsOf = (d: TextDelta, textOffset: number): CompletionLogprobs | null => {
    if (logprobs === undefined) return null;
    const positions = logprobPositions(d.output);
    return positions === null
      ? null
      : completionLogprobs(tok, positions, logprobs, textOffset, target.tokensAsIds);
  };
  const finishOf = (d: TextDelta) =>
    d.finishReason === null ? null : finishReasonName(d.finishReason ?? FinishReason.STOP);

  if (!stream) {
    let text = "";
    let completionTokens = 0;
    let last: TextDelta | undefined;
    const all: CompletionLogprobs = { text_offset: [], token_logprobs: [], tokens: [], top_logprobs: [] };
    let offset = 0;
    try {
      for await (const d of textStream) {
        text += d.text;
        completionTokens += d.tokenIds.length;
        const lp = logprobsOf(d, offset);
        if (lp) {
          all.text_offset.push(...lp.text_offset);
          all.token_logprobs.push(...lp.token_logprobs);
          all.tokens.push(...lp.tokens);
          all.top_logprobs.push(...lp.top_logprobs);
          const lastToken = lp.tokens.at(-1);
          if (lastToken !== undefined) offset = lp.text_offset.at(-1)! + pyLen(lastToken);
        }
        last = d;
      }
    } catch (error) {
      if (signal.aborted) return reply;
      throw error;
    }
    return {
      ...base,
      choices: [
        {
          index: 0,
          text,
          logprobs: logprobs !== undefined ? all : null,
          finish_reason: last ? finishOf(last) : null,
          stop_reason: last?.stopReason ?? null,
          prompt_logprobs: null,
        },
      ],
      usage: usage(prompt.length, completionTokens),
    };
  }

  const sse = new SseWriter(reply.raw, ctx.sseStats);
  reply.hijack();
  sse.open();
  const textChunk = TextChunkTemplate.completion(base);
  let completionTokens = 0;
  let textLength = 0;
  try {
    for await (const d of textStream) {
      completionTokens += d.tokenIds.length;
      // Streaming offsets start at the length of the text sent so far (vLLM's `previous_text_lens`).
      const lp = logprobsOf(d, textLength);
      textLength += pyLen(d.text);
      if (d.text === "" && !d.finished && lp === null) continue;
      const choice = () => ({
        index: 0,
        text: d.text,
        logprobs: lp,
        finish_reason: finishOf(d),
        stop_reason: d.finished ? d.stopReason : null,
      });
      const u = continuousUsage ? usage(prompt.length, completionTokens) : undefined;
      const sent =
        d.text !== "" && !d.finished && lp === null
          ? sse.sendJson(textChunk.json(d.text, u))
          : sse.send({ ...base, choices: [choice()], ...(u === undefined ? {} : { usage: u }) });
      if (!(await sent)) break;
    }
    if (sse.closed) return reply;
    if (includeUsage) await sse.send({ ...base, choices: [], usage: usage(prompt.length, completionTokens) });
    await sse.done();
  } catch (error) {
    if (signal.aborted || sse.closed) return reply;
    await sse.send(toApiError(error).toBody());
    await sse.done();
  }
  return reply;
}
