// Turns what a caller passes to `call()` into a complete `EngineCoreRequest`. The engine decodes
// requests on its input thread with no error path back to us (an undecodable or invalid request kills
// that thread), so every rule of that decode is checked first (validation/).
import type { StructuredOutputsBackend } from "@vllm-engine-core/config";
import type { EngineCoreRequest, SamplingParamsInit, VllmVersion } from "@vllm-engine-core/protocol";
import { resolveStructuredOutputs } from "./structured-outputs/backend.js";
import { validateRequest } from "./validation/index.js";

/** What `call()` accepts: the required fields, everything else defaults like vLLM's Python frontend. */
export type CallRequest = Pick<EngineCoreRequest, "requestId" | "promptTokenIds"> &
  Partial<Omit<EngineCoreRequest, "requestId" | "promptTokenIds">>;

/**
 * Validates `input` with the rules of the engines' vLLM versions and returns the full wire request:
 * defaults filled in as vLLM's Python frontend does (arrival time now, no multimodal features, no
 * LoRA, the structured-outputs backend chosen), `clientIndex` stamped.
 */
export function buildRequest(
  input: CallRequest,
  clientIndex: number,
  limits: {
    maxModelLen: number | undefined;
    vllmVersions?: readonly VllmVersion[];
    /** `--structured-outputs-config.backend` (default "auto"). */
    structuredOutputsBackend?: StructuredOutputsBackend;
  },
): EngineCoreRequest {
  validateRequest(input, {
    maxModelLen: limits.maxModelLen,
    ...(limits.vllmVersions === undefined ? {} : { vllmVersion: limits.vllmVersions }),
  });
  return {
    ...input,
    mmFeatures: input.mmFeatures ?? null,
    samplingParams: withStructuredOutputsBackend(input, limits.structuredOutputsBackend ?? "auto"),
    poolingParams: input.poolingParams ?? null,
    arrivalTime: input.arrivalTime ?? Date.now() / 1000,
    loraRequest: input.loraRequest ?? null,
    cacheSalt: input.cacheSalt ?? null,
    dataParallelRank: input.dataParallelRank ?? null,
    clientIndex,
  };
}

/** The sampling params with `_backend` / `_backend_was_auto` set as vLLM's frontend sets them. */
function withStructuredOutputsBackend(
  input: CallRequest,
  backend: StructuredOutputsBackend,
): SamplingParamsInit | null {
  const sp = input.samplingParams ?? null;
  const so = sp?.structuredOutputs;
  if (sp === null || so === null || so === undefined) return sp;
  return { ...sp, structuredOutputs: resolveStructuredOutputs(so, backend, input.requestId) };
}
