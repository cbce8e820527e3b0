// EngineCoreRequest (vllm/v1/engine/__init__.py, an array_like msgspec Struct): every field's type as
// msgspec decodes it, the nested structs' own checks, and the client-side rules of the frontend role.
// `request` is what the caller passed to call(); fields the client fills in (client_index, defaults)
// are not the caller's to get wrong.
import { type Checker, MISSING } from "./checker.js";
import { verifyLoRARequest } from "./lora-request.js";
import { any, bool, float, int, isPlainObject, list, nullable, str, strMap } from "./msgspec-types.js";
import { verifyMultiModalFeatures } from "./multimodal.js";
import { verifyPoolingParams } from "./pooling-params.js";
import { verifySamplingParams } from "./sampling-params.js";

export interface RequestLimits {
  /** The engines' max_model_len (the smallest of them): longer prompts are refused. */
  maxModelLen?: number | undefined;
}

export function verifyEngineCoreRequest(
  c: Checker,
  request: Record<string, unknown>,
  limits: RequestLimits,
): void {
  str(c, "requestId", request.requestId);

  // prompt_token_ids: list[int] | None — this client always sends token ids (no prompt embeddings).
  c.require(request.promptEmbeds == null, "client.prompt_embeds", "promptEmbeds", request.promptEmbeds);
  const prompt = request.promptTokenIds;
  if (prompt === undefined || prompt === null)
    c.fail("frontend.prompt.empty", "promptTokenIds", prompt ?? MISSING);
  // Fast path for the common case (a plain array of safe integers: one tight loop, no per-token field
  // name or BigInt, which cost milliseconds on the caller's thread for a 32k-token prompt); anything else
  // takes the element-wise check that names the offending index.
  const tokens = isSafeIntArray(prompt)
    ? prompt
    : list(c, "promptTokenIds", prompt, (field, v) => int(c, field, v));
  c.require(tokens.length > 0, "frontend.prompt.empty", "promptTokenIds", prompt);
  const sampling = request.samplingParams ?? null;
  const pooling = request.poolingParams ?? null;
  if (limits.maxModelLen !== undefined) {
    // A request with SamplingParams is a generation (vLLM: the model's runner_type "generate").
    verifyPromptLength(c, tokens.length, limits.maxModelLen, sampling !== null, request.mmFeatures);
  }

  nullable(request.mmFeatures, (v) => verifyMultiModalFeatures(c, "mmFeatures", v));

  c.require(
    (sampling === null) !== (pooling === null),
    "frontend.params.one",
    "samplingParams",
    sampling === null ? MISSING : "both set",
  );
  if (sampling !== null) {
    verifySamplingParams(c, "samplingParams", sampling);
    if (isPlainObject(sampling)) {
      c.require(sampling.maxTokens !== null, "frontend.max_tokens.null", "samplingParams.maxTokens", null);
    }
  }
  if (pooling !== null) verifyPoolingParams(c, "poolingParams", pooling);

  // arrival_time: float; null/undefined is filled in with the current time by buildRequest.
  if (request.arrivalTime != null) float(c, "arrivalTime", request.arrivalTime);
  nullable(request.loraRequest, (v) => verifyLoRARequest(c, "loraRequest", v));
  nullable(request.cacheSalt, (v) => str(c, "cacheSalt", v));
  nullable(request.dataParallelRank, (v) => int(c, "dataParallelRank", v));
  nullable(request.promptIsTokenIds, (v) => list(c, "promptIsTokenIds", v, (field, x) => bool(c, field, x)));
  for (const key of ["currentWave", "priority"]) {
    if (request[key] !== undefined) int(c, key, request[key]);
  }
  nullable(request.traceHeaders, (v) => strMap(c, "traceHeaders", v, (field, x) => str(c, field, x)));
  for (const key of ["resumable", "abortImmediately"]) {
    if (request[key] !== undefined) bool(c, key, request[key]);
  }
  nullable(request.externalReqId, (v) => str(c, "externalReqId", v));
  nullable(request.reasoningEnded, (v) => bool(c, "reasoningEnded", v));
  nullable(request.reasoningParserKwargs, (v) =>
    strMap(c, "reasoningParserKwargs", v, (field, x) => any(c, field, x)),
  );
  // session_id: str | None, appended after the pin (f57123aa). Engines up to the pin skip the extra
  // trailing element; the codec writes it only when set, and only a str.
  nullable(request.sessionId, (v) => str(c, "sessionId", v));
}

/**
 * vLLM's InputProcessor._validate_prompt_len (vllm/v1/engine/input_processor.py), with its wording: a
 * decoder prompt longer than max_model_len is refused; for a generation one of exactly max_model_len too,
 * since it leaves no room for one output token (the engine would accept it and its scheduler never
 * schedule its last prompt token: the request would wait forever). A pooling prompt may fill the window.
 * vLLM picks the suggestion by whether the model takes multimodal inputs; here, by whether the request
 * carries multimodal features.
 */
function verifyPromptLength(
  c: Checker,
  promptLength: number,
  maxModelLen: number,
  generation: boolean,
  mmFeatures: unknown,
): void {
  if (promptLength > maxModelLen) {
    const suggestion =
      Array.isArray(mmFeatures) && mmFeatures.length > 0
        ? "Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal " +
          "tokens. For image inputs, the number of image tokens depends on the number of images, and " +
          "possibly their aspect ratios as well."
        : "Make sure that `max_model_len` is no smaller than the number of text tokens.";
    c.fail(
      "frontend.prompt.max_model_len",
      "promptTokenIds",
      `${promptLength} tokens`,
      `The decoder prompt (length ${promptLength}) is longer than the maximum model length of ` +
        `${maxModelLen}. ${suggestion}`,
    );
  }
  if (promptLength === maxModelLen && generation) {
    c.fail(
      "frontend.prompt.max_model_len.generate",
      "promptTokenIds",
      `${promptLength} tokens`,
      `The decoder prompt (length ${promptLength}) plus the number of requested output tokens (at least 1) ` +
        `is longer than the maximum model length of ${maxModelLen}. Make sure that \`max_model_len\` is no ` +
        "smaller than the number of text tokens (prompt + requested output tokens).",
    );
  }
}

function isSafeIntArray(v: unknown): v is number[] {
  if (!Array.isArray(v)) return false;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x !== "number" || !Number.isSafeInteger(x)) return false;
  }
  return true;
}
