// The OpenAI request fields both generation endpoints share, checked and turned into the engine's sampling
// parameters as vLLM's `CompletionRequest.to_sampling_params` / `ChatCompletionRequest.to_sampling_params`
// do (vllm/entrypoints/openai/{completion,chat_completion}/protocol.py). Range checks on the values are
// left to the client's validation (vLLM's `SamplingParams._verify_args`), which names the field.
import type { SamplingParamsInit } from "@vllm-engine-core/client";
import type { GenerationDefaults } from "@vllm-engine-core/text";
import { logitBiasOf, structuredOutputsOf } from "./constraints.js";
import { badRequest, OpenAIApiError } from "./errors.js";

export type Body = Record<string, unknown>;

// The fields of the route schemas (body-schema.ts) arrive here already checked and converted as vLLM's
// pydantic models convert them; the readers below keep their own type checks for the fields a schema does not
// declare (and for callers that build a body in code), so what they throw is never reached for schema fields.

/** vLLM's default `--max-logprobs` (vllm/config/model.py ModelConfig.max_logprobs). */
export const MAX_LOGPROBS = 20;

export function asBody(body: unknown): Body {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("the request body must be a JSON object");
  }
  return body as Body;
}

function present(body: Body, key: string): boolean {
  return body[key] !== undefined && body[key] !== null;
}

export function optNumber(body: Body, key: string): number | undefined {
  if (!present(body, key)) return undefined;
  const v = body[key];
  if (typeof v !== "number" || !Number.isFinite(v)) throw badRequest(`\`${key}\` must be a number`, key);
  return v;
}

export function optInt(body: Body, key: string): number | undefined {
  const v = optNumber(body, key);
  if (v !== undefined && !Number.isInteger(v)) throw badRequest(`\`${key}\` must be an integer`, key);
  return v;
}

export function optBool(body: Body, key: string): boolean | undefined {
  if (!present(body, key)) return undefined;
  const v = body[key];
  if (typeof v !== "boolean") throw badRequest(`\`${key}\` must be a boolean`, key);
  return v;
}

export function optString(body: Body, key: string): string | undefined {
  if (!present(body, key)) return undefined;
  const v = body[key];
  if (typeof v !== "string") throw badRequest(`\`${key}\` must be a string`, key);
  return v;
}

/**
 * The request's session id (vLLM after the pin, #48048, f57123aa2): the body's `session_id`, else the
 * `X-Session-ID` header. It travels as EngineCoreRequest's `session_id` (sent only when set; an engine up to
 * the pin skips the extra trailing element, as msgspec does). Spread into the call request.
 */
export function sessionIdOf(
  body: Body,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): { sessionId?: string } {
  const header = headers["x-session-id"];
  const sessionId = optString(body, "session_id") || (typeof header === "string" ? header : undefined);
  return sessionId ? { sessionId } : {};
}

function optIntList(body: Body, key: string): number[] | undefined {
  if (!present(body, key)) return undefined;
  const v = body[key];
  if (!Array.isArray(v) || !v.every((x) => Number.isInteger(x))) {
    throw badRequest(`\`${key}\` must be a list of integers`, key);
  }
  return v as number[];
}

/** `stop`: a string or a list of strings (vLLM: `str | list[str] | None`). */
function stopStrings(body: Body): string[] | undefined {
  if (!present(body, "stop")) return undefined;
  const v = body.stop;
  if (typeof v === "string") return [v];
  if (Array.isArray(v) && v.every((s) => typeof s === "string")) return v as string[];
  throw badRequest("`stop` must be a string or a list of strings", "stop");
}

export interface StreamOptions {
  stream: boolean;
  includeUsage: boolean;
  continuousUsage: boolean;
}

export function streamOptions(body: Body): StreamOptions {
  const stream = optBool(body, "stream") ?? false;
  const raw = body.stream_options;
  if (raw === undefined || raw === null) return { stream, includeUsage: false, continuousUsage: false };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw badRequest("`stream_options` must be an object", "stream_options");
  }
  // vLLM's validator: "Stream options can only be defined when `stream=True`."
  if (!stream) throw badRequest("Stream options can only be defined when `stream=True`.", "stream_options");
  const opts = raw as Body;
  return {
    stream,
    includeUsage: optBool(opts, "include_usage") ?? false,
    continuousUsage: optBool(opts, "continuous_usage_stats") ?? false,
  };
}

/**
 * Tokens per streamed chunk: the request's `stream_interval` raised to the server's `--stream-interval`
 * (vLLM's output_processor.py: `max(sampling_params.stream_interval, stream_interval)`); 1 without streaming,
 * where only the final output is read. The body schema has checked it is an integer ≥ 1 or null.
 */
export function streamIntervalOf(body: Body, stream: boolean, serverInterval: number): number {
  if (!stream) return 1;
  const asked = body.stream_interval;
  return typeof asked === "number" ? Math.max(asked, serverInterval) : serverInterval;
}

/**
 * `n`: the number of choices per prompt (default 1; vLLM's `n: int = 1`). Its range is checked with the
 * parent's sampling parameters (`checkParentSampling` in fan-out.ts). `best_of` is not a field of vLLM's
 * completion or chat request at the pinned revision: like any unknown field it is ignored.
 */
export function choiceCount(body: Body): number {
  return optInt(body, "n") ?? 1;
}

/**
 * `prompt_logprobs` (both endpoints), checked as vLLM's `check_logprobs` validators
 * (vllm/entrypoints/openai/{completion,chat_completion}/protocol.py) and `SamplingParams._validate_logprobs`
 * (-1 = the whole vocabulary, refused above MAX_LOGPROBS).
 */
export function promptLogprobsOf(body: Body, stream: boolean, vocabSize: number): number | undefined {
  const v = optInt(body, "prompt_logprobs");
  if (v === undefined) return undefined;
  if (stream && (v > 0 || v === -1)) {
    throw badRequest("`prompt_logprobs` are not available when `stream=True`.", "prompt_logprobs");
  }
  if (v < 0 && v !== -1)
    throw badRequest("`prompt_logprobs` must be a positive value or -1.", "prompt_logprobs");
  const requested = v === -1 ? vocabSize : v;
  if (requested > MAX_LOGPROBS) {
    throw badRequest(
      `Requested prompt logprobs of ${requested}, which is greater than max allowed: ${MAX_LOGPROBS}`,
      "prompt_logprobs",
    );
  }
  return v;
}

/**
 * Sampling parameters other than `max_tokens` and `logprobs`, with the model's generation_config defaults
 * for what the request leaves out (vLLM's `default_sampling_params`, `get_diff_sampling_param`).
 */
export function samplingFromBody(body: Body, defaults: GenerationDefaults): SamplingParamsInit {
  const sp: SamplingParamsInit = {};
  const temperature = optNumber(body, "temperature") ?? defaults.temperature;
  if (temperature !== undefined) sp.temperature = temperature;
  const topP = optNumber(body, "top_p") ?? defaults.topP;
  if (topP !== undefined) sp.topP = topP;
  const topK = optInt(body, "top_k") ?? defaults.topK;
  if (topK !== undefined) sp.topK = topK;
  const minP = optNumber(body, "min_p") ?? defaults.minP;
  if (minP !== undefined) sp.minP = minP;
  const repetitionPenalty = optNumber(body, "repetition_penalty") ?? defaults.repetitionPenalty;
  if (repetitionPenalty !== undefined) sp.repetitionPenalty = repetitionPenalty;
  const presencePenalty = optNumber(body, "presence_penalty");
  if (presencePenalty !== undefined) sp.presencePenalty = presencePenalty;
  const frequencyPenalty = optNumber(body, "frequency_penalty");
  if (frequencyPenalty !== undefined) sp.frequencyPenalty = frequencyPenalty;
  const seed = optInt(body, "seed");
  if (seed !== undefined) sp.seed = seed;
  const stop = stopStrings(body);
  if (stop !== undefined && stop.length > 0) sp.stop = stop;
  const stopTokenIds = optIntList(body, "stop_token_ids");
  if (stopTokenIds !== undefined) sp.stopTokenIds = stopTokenIds;
  const minTokens = optInt(body, "min_tokens");
  if (minTokens !== undefined) sp.minTokens = minTokens;
  const ignoreEos = optBool(body, "ignore_eos");
  if (ignoreEos !== undefined) sp.ignoreEos = ignoreEos;
  const includeStop = optBool(body, "include_stop_str_in_output");
  if (includeStop !== undefined) sp.includeStopStrInOutput = includeStop;
  const skipSpecial = optBool(body, "skip_special_tokens");
  if (skipSpecial !== undefined) sp.skipSpecialTokens = skipSpecial;
  const spaces = optBool(body, "spaces_between_special_tokens");
  if (spaces !== undefined) sp.spacesBetweenSpecialTokens = spaces;
  const logitBias = logitBiasOf(body);
  if (logitBias !== undefined) sp.logitBias = logitBias;
  const structuredOutputs = structuredOutputsOf(body);
  if (structuredOutputs !== undefined) sp.structuredOutputs = structuredOutputs;
  const extraArgs = vllmXargs(body);
  if (extraArgs !== undefined) sp.extraArgs = extraArgs;
  return sp;
}

/**
 * `vllm_xargs`: extra arguments for the engine's custom sampling code, sent as `SamplingParams.extra_args`
 * (vLLM's `to_sampling_params`; values a string, a number or a list of them). The mock engine and the
 * model-free executor read `scripted_token_ids` / `scripted_end` from it.
 */
function vllmXargs(body: Body): Record<string, unknown> | undefined {
  if (!present(body, "vllm_xargs")) return undefined;
  const v = body.vllm_xargs;
  const scalar = (x: unknown) => typeof x === "string" || (typeof x === "number" && Number.isFinite(x));
  if (
    typeof v !== "object" ||
    v === null ||
    Array.isArray(v) ||
    !Object.values(v).every((x) => scalar(x) || (Array.isArray(x) && x.every(scalar)))
  ) {
    throw badRequest("`vllm_xargs` must map strings to a string, a number or a list of them", "vllm_xargs");
  }
  return Object.keys(v).length === 0 ? undefined : (v as Record<string, unknown>);
}

/** Requested logprobs beyond the server's limit (vLLM: input_processor.py `_validate_logprobs`). */
export function checkLogprobs(n: number, param: string): void {
  if (n < 0) throw badRequest(`\`${param}\` must be >= 0`, param);
  if (n > MAX_LOGPROBS) {
    throw badRequest(
      `Requested sample logprobs of ${n}, which is greater than max allowed: ${MAX_LOGPROBS}`,
      param,
    );
  }
}

/**
 * `max_tokens` for the engine and the prompt-length checks of vLLM's OpenAI server, with its messages as
 * `create_error_response` writes them (`str()` of a VLLMValidationError appends `(parameter=…, value=…)`,
 * vllm/exceptions.py):
 * - the renderer (vllm/renderers/params.py `TokenizeParams._token_len_check`): the prompt must fit in
 *   `max_model_len - max_tokens` (0 when not requested); "at least" when the prompt is exactly one token
 *   over, as vLLM's tokenizer truncates a text prompt there (it cannot tell the two apart either);
 * - then `get_max_tokens` (vllm/entrypoints/serve/utils/api_utils.py) leaves `max_model_len - prompt`:
 *   for a prompt filling the window without a requested output that is 0, which SamplingParams refuses
 *   (`_verify_args`: "max_tokens must be at least 1"). vLLM's engine-side rule for that prompt
 *   (input_processor.py `_validate_prompt_len`) is the client's, never reached from here.
 */
export function resolveMaxTokens(
  requested: number | undefined,
  defaultMax: number | undefined,
  promptLength: number,
  maxModelLen: number,
): number {
  const output = requested ?? 0;
  const maxInput = maxModelLen - output;
  if (promptLength > maxInput) {
    const qualifier = promptLength === maxInput + 1 ? "at least " : "";
    throw new OpenAIApiError(
      400,
      "BadRequestError",
      `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${output} ` +
        `output tokens and your prompt contains ${qualifier}${promptLength} input tokens, for a total of ` +
        `${qualifier}${promptLength + output} tokens. Please reduce the length of the input prompt or the ` +
        `number of requested output tokens. (parameter=input_tokens, value=${promptLength})`,
      "input_tokens",
    );
  }
  if (requested === undefined && promptLength >= maxModelLen) {
    throw new OpenAIApiError(
      400,
      "BadRequestError",
      "max_tokens must be at least 1, got 0. (parameter=max_tokens, value=0)",
      "max_tokens",
    );
  }
  const room = maxModelLen - promptLength;
  return Math.min(requested ?? room, defaultMax ?? room, room);
}
