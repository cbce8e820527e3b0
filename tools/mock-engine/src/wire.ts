// The mock engine's only contact with the wire format: thin adapters over @vllm-engine-core/protocol that
// turn protocol views into the small shapes the engine works with, plus the engine-side validation vLLM
// performs while decoding (SamplingParams.__post_init__) — a failure there kills vLLM's input thread.
import {
  DEFAULT_AUX_THRESHOLD,
  type DecodedEngineCoreRequest,
  decodeHandshakeInit,
  decodeInputMessage,
  decodeValue,
  ENGINE_CORE_DEAD,
  encodeEngineCoreOutputs,
  encodeHandshakeStatus,
  encodeReadyResponse,
  engineIdentity as protocolEngineIdentity,
  type SamplingParams,
} from "@vllm-engine-core/protocol";
import type { MockReadyResponse } from "./ready-response.js";
import type { StepOutput } from "./scheduler.js";

export const ENGINE_CORE_DEAD_FRAME: Uint8Array = ENGINE_CORE_DEAD;
/** Fault switch payload: 0xc1 is the one byte msgpack never uses, so no decoder can accept this frame. */
export const GARBAGE_FRAME: Uint8Array = Uint8Array.from([
  0xc1,
  ...new TextEncoder().encode("mock-engine garbage"),
]);

export function engineIdentity(index: number): Buffer {
  const id = protocolEngineIdentity(index);
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength);
}

export interface InitAddresses {
  inputs: string[];
  outputs: string[];
}

export function encodeStatus(status: { status: string; local: boolean; headless: boolean }): Uint8Array {
  return encodeHandshakeStatus(status);
}

export function decodeInit(payload: Uint8Array): InitAddresses {
  const init = decodeHandshakeInit(payload);
  return { inputs: [...init.addresses.inputs], outputs: [...init.addresses.outputs] };
}

export function encodeRegistration(response: MockReadyResponse): Uint8Array {
  return encodeReadyResponse(response);
}

export interface MockSampling {
  maxTokens: number | null;
  minTokens: number;
  eosTokenId: number | null;
  stopTokenIds: number[];
  logprobs: number | null;
  promptLogprobs: number | null;
}

export interface MockAddRequest {
  requestId: string;
  clientIndex: number;
  promptTokenIds: number[] | null;
  sampling: MockSampling | null;
  pooling: { task: string | null } | null;
  abortImmediately: boolean;
}

export type MockInput =
  | { type: "add"; request: MockAddRequest }
  | { type: "abort"; requestIds: string[] }
  | { type: "utility"; clientIndex: number; callId: bigint; method: string; args: unknown[] }
  | { type: "executor_failed" }
  | { type: "wakeup" }
  | { type: "other"; typeByte: number };

/** Engine-internal request types (EngineCoreRequestType) that vLLM still accepts from its input socket. */
const EXECUTOR_FAILED = 0x04;
const WAKEUP = 0x05;

/** The validation error vLLM raises while decoding SamplingParams (its __post_init__ / _verify_args). */
export class SamplingValidationError extends Error {
  override readonly name = "SamplingValidationError";
  readonly code = "SAMPLING_VALIDATION";
}

function verifySampling(sp: SamplingParams): void {
  const bad = (message: string): never => {
    throw new SamplingValidationError(message);
  };
  const n = sp.n ?? 1;
  if (n < 1) bad(`n must be at least 1, got ${n}.`);
  const presence = sp.presencePenalty ?? 0;
  if (!(presence >= -2 && presence <= 2)) bad(`presence_penalty must be in [-2, 2], got ${presence}.`);
  const frequency = sp.frequencyPenalty ?? 0;
  if (!(frequency >= -2 && frequency <= 2)) bad(`frequency_penalty must be in [-2, 2], got ${frequency}.`);
  const repetition = sp.repetitionPenalty ?? 1;
  if (!Number.isFinite(repetition)) bad(`repetition_penalty must be a finite number, got ${repetition}.`);
  if (repetition <= 0) bad(`repetition_penalty must be greater than zero, got ${repetition}.`);
  const temperature = sp.temperature ?? 1;
  if (!Number.isFinite(temperature)) bad(`temperature must be a finite number, got ${temperature}.`);
  if (temperature < 0) bad(`temperature must be non-negative, got ${temperature}.`);
  if (temperature > 2) bad(`temperature must be in [0, 2], got ${temperature}.`);
  const topP = sp.topP ?? 1;
  if (!(topP > 0 && topP <= 1)) bad(`top_p must be in (0, 1], got ${topP}.`);
  const topK = sp.topK ?? 0;
  if (topK < -1) bad(`top_k must be 0 (disable), or at least 1, got ${topK}.`);
  const minP = sp.minP ?? 0;
  if (!(minP >= 0 && minP <= 1)) bad(`min_p must be in [0, 1], got ${minP}.`);
  const maxTokens = sp.maxTokens === undefined ? 16 : sp.maxTokens;
  if (maxTokens !== null && maxTokens < 1) bad(`max_tokens must be at least 1, got ${maxTokens}.`);
  const minTokens = sp.minTokens ?? 0;
  if (minTokens < 0) bad(`min_tokens must be greater than or equal to 0, got ${minTokens}.`);
  if (maxTokens !== null && minTokens > maxTokens) {
    bad(`min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`);
  }
  if (sp.streamInterval != null && sp.streamInterval < 1) {
    bad(`stream_interval must be at least 1, got ${sp.streamInterval}.`);
  }
  if (sp.logprobs != null && sp.logprobs !== -1 && sp.logprobs < 0) {
    bad(`logprobs must be non-negative or -1, got ${sp.logprobs}.`);
  }
  if (sp.promptLogprobs != null && sp.promptLogprobs !== -1 && sp.promptLogprobs < 0) {
    bad(`prompt_logprobs must be non-negative or -1, got ${sp.promptLogprobs}.`);
  }
  const stop = sp.stop == null ? [] : typeof sp.stop === "string" ? [sp.stop] : sp.stop;
  if (stop.some((s) => !s)) bad("stop cannot contain an empty string.");
  if (stop.length > 0 && sp.detokenize === false) {
    bad("stop strings are only supported when detokenize is True. Set detokenize=True to use stop.");
  }
  if ((sp.badWords ?? []).some((w) => !w)) bad("bad_words cannot contain an empty string.");
}

function toMockAdd(request: DecodedEngineCoreRequest): MockAddRequest {
  const sp = request.samplingParams;
  let sampling: MockSampling | null = null;
  if (sp) {
    verifySampling(sp);
    sampling = {
      maxTokens: sp.maxTokens === undefined ? 16 : sp.maxTokens,
      minTokens: sp.minTokens ?? 0,
      eosTokenId: sp.eosTokenId ?? null,
      stopTokenIds: [...(sp.stopTokenIds ?? [])],
      logprobs: sp.logprobs ?? null,
      promptLogprobs: sp.promptLogprobs ?? null,
    };
  }
  const pooling = request.poolingParams ? { task: request.poolingParams.task ?? null } : null;
  return {
    requestId: request.requestId,
    clientIndex: request.clientIndex ?? 0,
    promptTokenIds: request.promptTokenIds ? [...request.promptTokenIds] : null,
    sampling,
    pooling,
    abortImmediately: request.abortImmediately ?? false,
  };
}

/** Decodes one input-socket message `[type, payload, ...aux]`; throws like vLLM's input thread would. */
export function decodeInput(frames: readonly Uint8Array[]): MockInput {
  const typeFrame = frames[0];
  if (typeFrame?.byteLength === 1 && (typeFrame[0] === EXECUTOR_FAILED || typeFrame[0] === WAKEUP)) {
    // vLLM decodes their payload generically and queues them: WAKEUP is ignored, EXECUTOR_FAILED is fatal.
    const payload = frames[1];
    if (payload === undefined) throw new Error("missing payload frame");
    decodeValue(payload);
    return typeFrame[0] === WAKEUP ? { type: "wakeup" } : { type: "executor_failed" };
  }
  const message = decodeInputMessage(frames);
  switch (message.type) {
    case "add":
      return { type: "add", request: toMockAdd(message.request) };
    case "abort":
      return { type: "abort", requestIds: [...message.requestIds] };
    case "utility":
      return {
        type: "utility",
        clientIndex: message.call.clientIndex,
        callId: message.call.callId,
        method: message.call.method,
        args: [...message.call.args],
      };
    default:
      return { type: "other", typeByte: frames[0]?.[0] ?? -1 };
  }
}

export interface MockOutputs {
  engineIndex: number;
  timestamp: number;
  outputs?: StepOutput[];
  finishedRequests?: string[];
  utilityOutput?: { callId: bigint; failureMessage: string | null; result: { value: unknown } | null };
}

/**
 * MsgpackEncoder's size_threshold: envs.VLLM_MSGPACK_ZERO_COPY_THRESHOLD (default 256, parsed with int()).
 * Arrays of at least this many bytes travel as aux frames, smaller ones inline as ext 3.
 */
export function zeroCopyThreshold(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.VLLM_MSGPACK_ZERO_COPY_THRESHOLD;
  if (raw === undefined) return DEFAULT_AUX_THRESHOLD;
  const literal = raw.trim();
  // Python's int(): optional sign, decimal digits, single underscores between digits.
  if (!/^[+-]?\d+(?:_\d+)*$/.test(literal)) {
    throw new Error(`invalid literal for int() with base 10: '${raw}' (VLLM_MSGPACK_ZERO_COPY_THRESHOLD)`);
  }
  return Number(literal.replaceAll("_", ""));
}

export function encodeOutputs(o: MockOutputs, auxThreshold = DEFAULT_AUX_THRESHOLD): Uint8Array[] {
  return encodeEngineCoreOutputs(
    {
      engineIndex: o.engineIndex,
      timestamp: o.timestamp,
      outputs: (o.outputs ?? []).map((out) => ({
        requestId: out.requestId,
        newTokenIds: out.newTokenIds,
        newLogprobs: out.newLogprobs ?? null,
        newPromptLogprobsTensors: out.newPromptLogprobsTensors ?? null,
        finishReason: out.finishReason as 0 | 1 | 2 | 3 | 4 | null,
        stopReason: out.stopReason,
      })),
      finishedRequests: o.finishedRequests ?? null,
      utilityOutput: o.utilityOutput
        ? {
            callId: o.utilityOutput.callId,
            failureMessage: o.utilityOutput.failureMessage,
            result: o.utilityOutput.result ? { typeInfo: null, value: o.utilityOutput.result.value } : null,
          }
        : null,
    },
    { auxThreshold },
  );
}
