// POST /v1/completions, as vLLM's `OpenAIServingCompletion` (vllm/entrypoints/openai/completion/serving.py
// `create_completion`, `completion_stream_generator`, `request_output_to_completion_response`).
import { FinishReason, finishReasonName, type SamplingParamsInit } from "@vllm-engine-core/client";
import { type TextDelta, withModelStopTokens } from "@vllm-engine-core/text";
import type { FastifyReply, FastifyRequest } from "fastify";
import { TextChunkTemplate } from "./chunk-json.js";
import {
  disconnectSignal,
  engineIds,
  nowSeconds,
  requestTarget,
  type ServerContext,
  streamUsage,
  usage,
} from "./context.js";
import { badRequest, toApiError } from "./errors.js";
import {
  type Choice,
  checkParentSampling,
  mergeChoices,
  type PromptRequest,
  startChoices,
} from "./fan-out.js";
import {
  type CompletionLogprobs,
  completionLogprobs,
  deltaLogprobPositions,
  type LogprobPosition,
  pyLen,
  type UnscoredToken,
} from "./logprobs.js";
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

/** vLLM's `CompletionRequest.max_tokens` default. */
const DEFAULT_COMPLETION_MAX_TOKENS = 16;

/** vLLM's `VLLM_MAX_COMPLETION_PROMPTS` default (vllm/envs.py). */
const MAX_COMPLETION_PROMPTS = 1024;

const isIdList = (v: unknown): v is number[] =>
  Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x));

/** One prompt: its token ids, and its text (what `echo` prepends). */
interface Prompt {
  tokenIds: number[];
  text: string;
}

/**
 * `prompt` as vLLM's `CompletionRequest.prompt`: a string, a list of token ids, or a list of strings or
 * of token-id lists (several prompts, at most VLLM_MAX_COMPLETION_PROMPTS). The text of a token-id prompt
 * is its decode (vLLM's renderer detokenizes it for `echo`).
 */
async function promptsOf(ctx: ServerContext, body: Body): Promise<Prompt[]> {
  const prompt = body.prompt;
  let list: (string | number[])[];
  if (typeof prompt === "string" || isIdList(prompt)) list = [prompt];
  else if (
    Array.isArray(prompt) &&
    prompt.length > 0 &&
    (prompt.every((p) => typeof p === "string") || prompt.every(isIdList))
  ) {
    list = prompt as (string | number[])[];
  } else {
    throw badRequest(
      "`prompt` must be a string, a list of token ids, or a list of strings or of token-id lists",
      "prompt",
    );
  }
  if (list.length > MAX_COMPLETION_PROMPTS) {
    throw badRequest(
      `prompt list length ${list.length} exceeds the maximum allowed count of ${MAX_COMPLETION_PROMPTS}.`,
      "prompt",
    );
  }
  const addSpecialTokens = optBool(body, "add_special_tokens") ?? true;
  const prompts: Prompt[] = [];
  for (const p of list) {
    if (typeof p !== "string") {
      prompts.push({ tokenIds: p, text: ctx.tokenizer.decode(p) });
      continue;
    }
    if (p === "") throw badRequest("`prompt` must not be empty", "prompt");
    prompts.push({ tokenIds: await ctx.tokenizer.encode(p, { addSpecialTokens }), text: p });
  }
  return prompts;
}

export async function completions(
  ctx: ServerContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  const tok = ctx.tokenizer;
  const body = asBody(request.body);
  const target = requestTarget(ctx, request, body, "cmpl");
  const n = choiceCount(body);
  // vLLM's renderer: "suffix is not currently supported".
  if (body.suffix !== undefined && body.suffix !== null) {
    throw badRequest("suffix is not currently supported", "suffix");
  }
  const echo = optBool(body, "echo") ?? false;
  const { stream, includeUsage, continuousUsage } = streamOptions(body);
  // CompletionRequest: `logprobs: int | None`, the number of top logprobs per token.
  const logprobs = optInt(body, "logprobs");
  if (logprobs !== undefined) checkLogprobs(logprobs, "logprobs");
  // `to_sampling_params`: with `echo`, the prompt is scored with `logprobs` unless `prompt_logprobs` says.
  const promptLogprobs = promptLogprobsOf(body, stream, tok.vocabSize) ?? (echo ? logprobs : undefined);
  const sampling = samplingFromBody(body, tok.generationDefaults);
  const requestedMax =
    body.max_tokens === null ? undefined : (optInt(body, "max_tokens") ?? DEFAULT_COMPLETION_MAX_TOKENS);
  // `echo` with `max_tokens: 0` returns the prompt only; the engine still generates one token.
  const echoOnly = echo && requestedMax === 0;
  const prompts = await promptsOf(ctx, body);
  const id = target.id;
  const requests: PromptRequest[] = prompts.map((prompt, i) => {
    const maxTokens = resolveMaxTokens(
      requestedMax,
      tok.generationDefaults.maxTokens,
      prompt.tokenIds.length,
      ctx.maxModelLen,
    );
    const samplingParams: SamplingParamsInit = withModelStopTokens(
      {
        ...sampling,
        maxTokens: echoOnly ? 1 : maxTokens,
        ...(logprobs !== undefined ? { logprobs } : {}),
        ...(promptLogprobs !== undefined ? { promptLogprobs } : {}),
      },
      tok,
    );
    // vLLM: `request_id_item = f"{request_id}-{i}"`, one engine request per prompt, made unique by
    // `assign_request_id` (8 random hex characters) with the item's id kept as `external_req_id`.
    return {
      ...target.engine,
      ...engineIds(`${id}-${i}`),
      promptTokenIds: prompt.tokenIds,
      samplingParams,
      ...sessionIdOf(body, request.headers),
    };
  });
  checkParentSampling(requests[0]!, n);
  const signal = disconnectSignal(reply);
  const choices = await startChoices(
    ctx,
    requests,
    n,
    signal,
    streamIntervalOf(body, stream, ctx.streamInterval),
  );
  const deltas = mergeChoices(choices);
  const base = { id, object: "text_completion", created: nowSeconds(), model: target.model };
  const promptOf = (c: Choice) => prompts[c.promptIndex]!;
  const scoresOf = (d: TextDelta): PromptScores | null => {
    const tensors = d.output.newPromptLogprobsTensors;
    return promptLogprobs === undefined || tensors == null
      ? null
      : promptScores(tok, tensors, promptLogprobs);
  };
  const finishOf = (d: TextDelta) =>
    d.finishReason === null ? null : finishReasonName(d.finishReason ?? FinishReason.STOP);
  const promptTokens = prompts.reduce((sum, p) => sum + p.tokenIds.length, 0);

  if (!stream) {
    const results = choices.map(() => ({
      text: "",
      completionTokens: 0,
      last: undefined as TextDelta | undefined,
      positions: [] as LogprobPosition[],
      scores: null as PromptScores | null,
    }));
    try {
      for await (const { choice, delta: d } of deltas) {
        const r = results[choice.index]!;
        r.text += d.text;
        r.completionTokens += d.tokenIds.length;
        r.scores ??= scoresOf(d);
        if (logprobs !== undefined) r.positions.push(...(deltaLogprobPositions(d) ?? []));
        r.last = d;
      }
    } catch (error) {
      if (signal.aborted) return reply;
      throw error;
    }
    // vLLM's `request_output_to_completion_response`: choices prompt by prompt, sample by sample; with
    // `echo` the prompt's text (and its scored tokens) come first.
    const response = {
      ...base,
      choices: choices.map((choice) => {
        const r = results[choice.index]!;
        const prompt = promptOf(choice);
        let text = r.text;
        let lp: CompletionLogprobs | null = null;
        if (echo) text = echoOnly ? prompt.text : prompt.text + r.text;
        if (logprobs !== undefined) {
          const positions = echo
            ? [...echoedPositions(prompt, r.scores), ...(echoOnly ? [] : r.positions)]
            : r.positions;
          lp = completionLogprobs(tok, positions, logprobs, 0, target.tokensAsIds);
        }
        return {
          index: choice.index,
          text,
          logprobs: lp,
          finish_reason: r.last ? finishOf(r.last) : null,
          stop_reason: r.last?.stopReason ?? null,
          prompt_logprobs: r.scores?.json ?? null,
        };
      }),
      usage: usage(
        promptTokens,
        results.reduce((sum, r) => sum + r.completionTokens, 0),
      ),
    };
    if (promptLogprobs === undefined) return response;
    return reply.type("application/json; charset=utf-8").send(jsonWithMaps(response));
  }

  const sse = new SseWriter(reply.raw, ctx.sseStats);
  reply.hijack();
  sse.open();
  // Per choice (vLLM's `previous_num_tokens`, `previous_text_lens`, `has_echoed`).
  const completionTokens = choices.map(() => 0);
  const textLengths = choices.map(() => 0);
  const echoed = choices.map(() => !echo);
  const textChunks = choices.map((c) => TextChunkTemplate.completion(base, c.index));
  try {
    for await (const { choice, delta: d } of deltas) {
      const i = choice.index;
      completionTokens[i]! += d.tokenIds.length;
      // vLLM's one skip ("chunked prefill case", outside its echo branch): no text, no tokens, none before
      // (the count already includes this delta's). A token whose text is held back (an unfinished
      // character, a possible stop string) still gets its chunk, with text "".
      if (echoed[i] && d.text === "" && completionTokens[i] === 0) continue;
      let text = d.text;
      let positions: (LogprobPosition | UnscoredToken)[] | null =
        logprobs === undefined ? null : deltaLogprobPositions(d);
      if (!echoed[i]) {
        // The prompt goes out with the choice's first output (its prompt logprobs come with it).
        const prompt = promptOf(choice);
        text = echoOnly ? prompt.text : prompt.text + d.text;
        if (logprobs !== undefined) {
          const scored = echoedPositions(prompt, scoresOf(d));
          positions = echoOnly ? scored : [...scored, ...(positions ?? [])];
        }
        echoed[i] = true;
      }
      // Streaming offsets start at the length of the text sent so far (vLLM's `previous_text_lens`, which
      // counts the generated text only, also after an echoed prompt).
      const lp =
        positions === null
          ? null
          : completionLogprobs(tok, positions, logprobs!, textLengths[i]!, target.tokensAsIds);
      // Only logprobs read the offsets (a code-point count per token otherwise spent for nothing).
      if (logprobs !== undefined) textLengths[i]! += pyLen(d.text);
      if (!d.finished && lp === null) {
        // The common chunk: a text delta from the per-request template ("" while its text is held back).
        const json = continuousUsage
          ? textChunks[i]!.jsonWithUsage(text, promptOf(choice).tokenIds.length, completionTokens[i]!)
          : textChunks[i]!.json(text);
        const sent = sse.sendJson(json);
        if (sent !== true && !(await sent)) break;
        continue;
      }
      const choiceJson = {
        index: i,
        text,
        logprobs: lp,
        finish_reason: finishOf(d),
        stop_reason: d.finished ? d.stopReason : null,
      };
      const u = continuousUsage
        ? streamUsage(promptOf(choice).tokenIds.length, completionTokens[i]!)
        : undefined;
      if (!(await sse.send({ ...base, choices: [choiceJson], ...(u === undefined ? {} : { usage: u }) })))
        break;
    }
    if (sse.closed) return reply;
    if (includeUsage) {
      const total = completionTokens.reduce((sum, t) => sum + t, 0);
      await sse.send({ ...base, choices: [], usage: streamUsage(promptTokens, total) });
    }
    await sse.done();
  } catch (error) {
    if (signal.aborted || sse.closed) return reply;
    await sse.send(toApiError(error).toBody());
    await sse.done();
  }
  return reply;
}

/**
 * The prompt's tokens as echoed logprobs read them: the first unscored, then each with its scores (vLLM's
 * `[*prompt_logprobs, *output.logprobs]`; prompt logprobs are asked for whenever `echo` has `logprobs`).
 */
function echoedPositions(prompt: Prompt, scores: PromptScores | null): (LogprobPosition | UnscoredToken)[] {
  return prompt.tokenIds.map((tokenId, i) => scores?.positions[i] ?? { tokenId, entries: null });
}
