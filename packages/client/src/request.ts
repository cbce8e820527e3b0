// Turns what a caller passes to `call()` into a complete `EngineCoreRequest`, rejecting everything
// the engine would choke on. The engine decodes requests on its input thread with no error path
// back to us (an undecodable or invalid request kills that thread), so validation must happen here.
import type { EngineCoreRequest, SamplingParamsInit } from "@vllm-engine-core/protocol";
import { Float64 } from "@vllm-engine-core/protocol";
import { InvalidRequestError } from "./errors.js";

/** What `call()` accepts: the required fields, everything else defaults like vLLM's Python frontend. */
export type CallRequest = Pick<EngineCoreRequest, "requestId" | "promptTokenIds"> &
  Partial<Omit<EngineCoreRequest, "requestId" | "promptTokenIds">>;

const U32_MAX = 2 ** 32 - 1;

function fail(requestId: string | undefined, field: string, detail: string): never {
  throw new InvalidRequestError({ requestId, field, detail });
}

function isTokenId(v: unknown): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= U32_MAX;
}

function checkTokenList(requestId: string, field: string, value: unknown, allowEmpty: boolean): void {
  if (!Array.isArray(value)) fail(requestId, field, "expected an array of token ids");
  if (!allowEmpty && value.length === 0) fail(requestId, field, "must not be empty");
  for (let i = 0; i < value.length; i++) {
    if (!isTokenId(value[i])) {
      fail(requestId, `${field}[${i}]`, `expected a non-negative integer token id, got ${String(value[i])}`);
    }
  }
}

function checkFloat(
  requestId: string,
  field: string,
  value: unknown,
  ok: (v: number) => boolean,
  range: string,
): void {
  if (value === undefined) return;
  const n = value instanceof Float64 ? value.value : value;
  if (typeof n !== "number" || Number.isNaN(n) || !Number.isFinite(n)) {
    fail(requestId, field, `expected a finite number, got ${String(n)}`);
  }
  if (!ok(n)) fail(requestId, field, `must be ${range}, got ${n}`);
}

function checkInt(requestId: string, field: string, value: unknown, min: number, nullable = false): void {
  if (value === undefined || (nullable && value === null)) return;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    fail(requestId, field, `expected an integer >= ${min}, got ${String(value)}`);
  }
}

/** The subset of vLLM's `SamplingParams._verify_args` that the engine relies on. */
function checkSamplingParams(requestId: string, sp: SamplingParamsInit): void {
  if (sp === null || typeof sp !== "object") fail(requestId, "samplingParams", "expected an object");
  checkInt(requestId, "samplingParams.n", sp.n, 1);
  checkFloat(
    requestId,
    "samplingParams.presencePenalty",
    sp.presencePenalty,
    (v) => v >= -2 && v <= 2,
    "in [-2, 2]",
  );
  checkFloat(
    requestId,
    "samplingParams.frequencyPenalty",
    sp.frequencyPenalty,
    (v) => v >= -2 && v <= 2,
    "in [-2, 2]",
  );
  checkFloat(requestId, "samplingParams.repetitionPenalty", sp.repetitionPenalty, (v) => v > 0, "> 0");
  checkFloat(requestId, "samplingParams.temperature", sp.temperature, (v) => v >= 0, ">= 0");
  checkFloat(requestId, "samplingParams.topP", sp.topP, (v) => v > 0 && v <= 1, "in (0, 1]");
  checkInt(requestId, "samplingParams.topK", sp.topK, -1);
  checkFloat(requestId, "samplingParams.minP", sp.minP, (v) => v >= 0 && v <= 1, "in [0, 1]");
  if (sp.maxTokens === null) {
    fail(requestId, "samplingParams.maxTokens", "must be set: the engine asserts max_tokens is not None");
  }
  checkInt(requestId, "samplingParams.maxTokens", sp.maxTokens, 1);
  checkInt(requestId, "samplingParams.minTokens", sp.minTokens, 0);
  if (sp.maxTokens !== undefined && sp.minTokens !== undefined && sp.minTokens > sp.maxTokens) {
    fail(
      requestId,
      "samplingParams.minTokens",
      `must not exceed maxTokens (${sp.maxTokens}), got ${sp.minTokens}`,
    );
  }
  checkInt(requestId, "samplingParams.logprobs", sp.logprobs, -1, true);
  checkInt(requestId, "samplingParams.promptLogprobs", sp.promptLogprobs, -1, true);
  if (sp.stopTokenIds != null)
    checkTokenList(requestId, "samplingParams.stopTokenIds", sp.stopTokenIds, true);
  if (sp.allStopTokenIds != null) {
    checkTokenList(requestId, "samplingParams.allStopTokenIds", sp.allStopTokenIds, true);
  }
  if (sp.eosTokenId != null && !isTokenId(sp.eosTokenId)) {
    fail(requestId, "samplingParams.eosTokenId", `expected a token id, got ${String(sp.eosTokenId)}`);
  }
  if (sp.allowedTokenIds != null) {
    checkTokenList(requestId, "samplingParams.allowedTokenIds", sp.allowedTokenIds, false);
  }
  if (sp.logitBias != null) {
    for (const [k, v] of Object.entries(sp.logitBias)) {
      if (!/^\d+$/.test(k)) fail(requestId, `samplingParams.logitBias[${k}]`, "keys must be token ids");
      checkFloat(requestId, `samplingParams.logitBias[${k}]`, v, () => true, "finite");
    }
  }
}

/**
 * Validates `input` and returns the full wire request: defaults filled in as vLLM's Python
 * frontend does (arrival time now, no multimodal features, no LoRA), `clientIndex` stamped.
 */
export function buildRequest(
  input: CallRequest,
  clientIndex: number,
  limits: { maxModelLen: number | undefined },
): EngineCoreRequest {
  if (input === null || typeof input !== "object") fail(undefined, "request", "expected an object");
  const { requestId } = input;
  if (typeof requestId !== "string" || requestId.length === 0) {
    fail(undefined, "requestId", `expected a non-empty string, got ${JSON.stringify(requestId)}`);
  }
  if (input.promptEmbeds != null) {
    fail(
      requestId,
      "promptEmbeds",
      "prompt embeddings are not supported by this client (as in vLLM's Rust client)",
    );
  }
  checkTokenList(requestId, "promptTokenIds", input.promptTokenIds, false);
  const promptLength = (input.promptTokenIds as number[]).length;
  if (limits.maxModelLen !== undefined && promptLength > limits.maxModelLen) {
    fail(
      requestId,
      "promptTokenIds",
      `prompt has ${promptLength} tokens, longer than the engine's max_model_len ${limits.maxModelLen}`,
    );
  }
  const sampling = input.samplingParams ?? null;
  const pooling = input.poolingParams ?? null;
  if ((sampling === null) === (pooling === null)) {
    fail(requestId, "samplingParams", "exactly one of samplingParams and poolingParams must be set");
  }
  if (sampling !== null) checkSamplingParams(requestId, sampling);
  if (input.arrivalTime !== undefined) {
    checkFloat(requestId, "arrivalTime", input.arrivalTime, (v) => v >= 0, ">= 0");
  }
  checkInt(requestId, "dataParallelRank", input.dataParallelRank, 0, true);
  checkInt(requestId, "priority", input.priority, Number.MIN_SAFE_INTEGER);

  return {
    ...input,
    requestId,
    promptTokenIds: input.promptTokenIds,
    mmFeatures: input.mmFeatures ?? null,
    samplingParams: sampling,
    poolingParams: pooling,
    arrivalTime: input.arrivalTime ?? Date.now() / 1000,
    loraRequest: input.loraRequest ?? null,
    cacheSalt: input.cacheSalt ?? null,
    dataParallelRank: input.dataParallelRank ?? null,
    clientIndex,
  };
}
