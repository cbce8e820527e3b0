// The mock engine's only contact with the wire format: thin adapters over @vllm-engine-core/protocol that
// turn protocol views into the small shapes the engine works with. ADD requests are decoded by the mock's
// own model of vLLM's decode (validation/), whose failures kill vLLM's input thread.
import {
  DEFAULT_AUX_THRESHOLD,
  decodeHandshakeInit,
  decodeInputMessage,
  decodeValue,
  ENGINE_CORE_DEAD,
  encodeEngineCoreOutputs,
  encodeHandshakeStatus,
  encodeReadyResponse,
  engineIdentity as protocolEngineIdentity,
  RequestType,
  type SchedulerStatsInit,
} from "@vllm-engine-core/protocol";
import { pyRepr } from "./python-values.js";
import type { MockReadyResponse } from "./ready-response.js";
import type { StepOutput } from "./scheduler.js";
import { makePrefillStats } from "./stats.js";
import {
  type DecodedEngineCoreRequest,
  decodeEngineCoreRequest,
  PythonError,
  recoverRequestId,
} from "./validation/index.js";
import { type DecodeRules, type MockVllmVersion, PIN_DECODE_RULES } from "./versions.js";

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
  /** The DP coordinator's engine-facing XPUB / PULL (null: no coordinator). */
  coordinatorInput?: string | null;
  coordinatorOutput?: string | null;
}

export function encodeStatus(status: { status: string; local: boolean; headless: boolean }): Uint8Array {
  return encodeHandshakeStatus(status);
}

export function decodeInit(payload: Uint8Array): InitAddresses {
  const init = decodeHandshakeInit(payload);
  return {
    inputs: [...init.addresses.inputs],
    outputs: [...init.addresses.outputs],
    coordinatorInput: init.addresses.coordinatorInput ?? null,
    coordinatorOutput: init.addresses.coordinatorOutput ?? null,
  };
}

/** The registration frame, in `version`'s dataclass (the response holds that version's keys only). */
export function encodeRegistration(
  response: MockReadyResponse,
  version: MockVllmVersion = "main",
): Uint8Array {
  return encodeReadyResponse(response, { vllmVersion: version });
}

export interface MockSampling {
  maxTokens: number | null;
  minTokens: number;
  eosTokenId: number | null;
  stopTokenIds: number[];
  /** `_all_stop_token_ids` after __post_init__ (the frontend's EOS ids plus stop_token_ids): min_tokens masks them. */
  allStopTokenIds: number[];
  logprobs: number | null;
  promptLogprobs: number | null;
  /** SamplingParams.structured_outputs as received (null: none): the backend the frontend chose. */
  structuredOutputs: MockStructuredOutputs | null;
  /** `extra_args["scripted_token_ids"]`: the tokens to generate first (see tokens.ts ScriptedTokenStream). */
  script: MockScript | null;
  /** A malformed script: the model-free executor raises inside the step (fatal for the engine). */
  scriptError: string | null;
  /** skip_reading_prefix_cache after __post_init__ (true when prompt logprobs are asked). */
  skipReadingPrefixCache: boolean;
  /** RepetitionDetectionParams (check_stop's last rule), or null. */
  repetitionDetection: MockRepetitionDetection | null;
}

export interface MockRepetitionDetection {
  maxPatternSize: number;
  minPatternSize: number;
  minCount: number;
}

/** The part of StructuredOutputsParams the engine acts on before compiling a grammar. */
export interface MockStructuredOutputs {
  /** `_backend` (null when the frontend did not set it). */
  backend: string | null;
  /** `_backend_was_auto`. */
  backendWasAuto: boolean;
  /** The constraint fields that are set, by wire name (`json`, `regex`, `choice`, `grammar`, ...). */
  kinds: string[];
}

const STRUCTURED_OUTPUT_KINDS = ["json", "regex", "choice", "grammar", "json_object", "structural_tag"];

function toMockStructuredOutputs(
  so: Record<string, unknown> | null | undefined,
): MockStructuredOutputs | null {
  if (so === null || so === undefined) return null;
  return {
    backend: (so._backend as string | null) ?? null,
    backendWasAuto: so._backend_was_auto === true,
    kinds: STRUCTURED_OUTPUT_KINDS.filter((k) => so[k] !== null && so[k] !== undefined),
  };
}

/**
 * A per-request script, the same keys the model-free executor for vLLM's real engine reads
 * (tools/vllm-executor): `scripted_token_ids` (ints), `scripted_end` "continue" (default: the executor's
 * deterministic ids follow) or "eos" (the EOS follows).
 */
export interface MockScript {
  tokenIds: number[];
  end: "continue" | "eos";
}

/**
 * The script in a request's extra_args (`script` null: none), checked as the executor's `resolve_script`
 * (script.py) checks it; `error` is its message for a malformed one (ids not all non-negative ints,
 * an unknown `scripted_end`, or `scripted_text`, which needs a tokenizer the mock does not have).
 */
export function readScript(
  extraArgs: ReadonlyMap<string, unknown> | Record<string, unknown> | null | undefined,
): { script: MockScript | null; error: string | null } {
  if (extraArgs === null || extraArgs === undefined) return { script: null, error: null };
  const has = (key: string) => (extraArgs instanceof Map ? extraArgs.has(key) : key in extraArgs);
  const get = (key: string) =>
    extraArgs instanceof Map ? extraArgs.get(key) : (extraArgs as Record<string, unknown>)[key];
  if (!has("scripted_token_ids")) {
    if (!has("scripted_text")) return { script: null, error: null };
    return {
      script: null,
      error:
        "model-free executor: extra_args.scripted_text needs the model's tokenizer, which the mock has not",
    };
  }
  const raw = get("scripted_token_ids");
  const ids = Array.isArray(raw) ? raw.map((t) => (typeof t === "bigint" ? Number(t) : t)) : null;
  if (ids === null || !ids.every((t) => Number.isInteger(t))) {
    return {
      script: null,
      error: `model-free executor: extra_args.scripted_token_ids must be a list of integer token ids, got ${pyRepr(raw)}`,
    };
  }
  // The executor also refuses ids past its model's vocabulary; the mock takes any id a tokenizer gives
  // (scripts of Qwen3 ids run on it), so only negative ids are outside every vocabulary.
  const bad = (ids as number[]).filter((t) => t < 0);
  if (bad.length > 0) {
    return {
      script: null,
      error: `model-free executor: extra_args.scripted_token_ids has ids outside the vocabulary: ${pyRepr(bad.slice(0, 5))}`,
    };
  }
  const end = get("scripted_end");
  if (end !== undefined && end !== null && end !== "continue" && end !== "eos") {
    return {
      script: null,
      error: `model-free executor: extra_args.scripted_end must be 'continue' or 'eos', got ${pyRepr(end)}`,
    };
  }
  return { script: { tokenIds: ids as number[], end: end === "eos" ? "eos" : "continue" }, error: null };
}

export interface MockAddRequest {
  requestId: string;
  clientIndex: number;
  /** The DP wave the frontend knew when it sent the request (DPAsyncMPClient.add_request_async stamps it). */
  currentWave: number;
  promptTokenIds: number[] | null;
  sampling: MockSampling | null;
  pooling: { task: string | null } | null;
  abortImmediately: boolean;
  /** `trace_headers`: the scheduler copies them onto every output of the request (update_from_output). */
  traceHeaders: Record<string, string> | null;
  /** Prefix-cache keys: `cache_salt` and the LoRA adapter's name. */
  cacheSalt: string | null;
  loraName: string | null;
  /** Array elements past EngineCoreRequest's fields, which the decode skipped (e.g. a newer frontend's session_id). */
  skippedTrailing: unknown[];
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

/** The pieces of a decoded EngineCoreRequest the mock engine serves (snake_case wire values in). */
function toMockAdd(request: DecodedEngineCoreRequest): MockAddRequest {
  const sp = request.sampling_params;
  const toNumber = (v: bigint | null) => (v === null ? null : Number(v));
  const script = sp ? readScript(sp.extra_args as ReadonlyMap<string, unknown> | null) : null;
  const repetition = sp?.repetition_detection as Record<string, bigint> | null | undefined;
  const sampling: MockSampling | null = sp
    ? {
        maxTokens: toNumber(sp.max_tokens),
        minTokens: Number(sp.min_tokens),
        eosTokenId: toNumber(sp._eos_token_id as bigint | null),
        stopTokenIds: (sp.stop_token_ids ?? []).map(Number),
        allStopTokenIds: [...((sp._all_stop_token_ids as Set<bigint> | undefined) ?? [])].map(Number),
        logprobs: toNumber(sp.logprobs as bigint | null),
        promptLogprobs: toNumber(sp.prompt_logprobs as bigint | null),
        structuredOutputs: toMockStructuredOutputs(
          sp.structured_outputs as Record<string, unknown> | null | undefined,
        ),
        script: script?.script ?? null,
        scriptError: script?.error ?? null,
        skipReadingPrefixCache: sp.skip_reading_prefix_cache === true,
        repetitionDetection: repetition
          ? {
              maxPatternSize: Number(repetition.max_pattern_size ?? 0),
              minPatternSize: Number(repetition.min_pattern_size ?? 0),
              minCount: Number(repetition.min_count ?? 0),
            }
          : null,
      }
    : null;
  const pooling = request.pooling_params
    ? { task: (request.pooling_params.task as string | null) ?? null }
    : null;
  return {
    requestId: request.request_id,
    clientIndex: Number(request.client_index),
    currentWave: Number(request.current_wave),
    promptTokenIds: request.prompt_token_ids ? request.prompt_token_ids.map(Number) : null,
    sampling,
    pooling,
    abortImmediately: request.abort_immediately,
    cacheSalt: (request.cache_salt as string | null | undefined) ?? null,
    loraName:
      ((request.lora_request as { lora_name?: string } | null | undefined)?.lora_name as string) ?? null,
    traceHeaders:
      request.trace_headers instanceof Map
        ? Object.fromEntries(request.trace_headers as Map<string, string>)
        : ((request.trace_headers as Record<string, string> | null | undefined) ?? null),
    skippedTrailing: Array.isArray(request.skipped_trailing) ? request.skipped_trailing : [],
  };
}

/** An ADD the engine could not decode: vLLM's input thread dies of `error` (the request id, if readable). */
export class UndecodableAddError extends Error {
  override readonly name = "UndecodableAddError";
  constructor(
    readonly error: PythonError,
    readonly requestId: string | undefined,
  ) {
    super(error.message);
  }
}

/**
 * Decodes one input-socket message `[type, payload, ...aux]`; throws like vLLM's input thread would.
 * `rules`: the decode-time validation of the version the engine plays.
 */
export function decodeInput(frames: readonly Uint8Array[], rules: DecodeRules = PIN_DECODE_RULES): MockInput {
  const typeFrame = frames[0];
  if (typeFrame?.byteLength === 1 && (typeFrame[0] === EXECUTOR_FAILED || typeFrame[0] === WAKEUP)) {
    // vLLM decodes their payload generically and queues them: WAKEUP is ignored, EXECUTOR_FAILED is fatal.
    const payload = frames[1];
    if (payload === undefined) throw new Error("missing payload frame");
    decodeValue(payload);
    return typeFrame[0] === WAKEUP ? { type: "wakeup" } : { type: "executor_failed" };
  }
  if (typeFrame?.byteLength === 1 && typeFrame[0] === RequestType.ADD) {
    // EngineCoreProc.process_input_sockets: add_request_decoder.decode(data_frames), outside any try.
    const dataFrames = frames.slice(1);
    try {
      return { type: "add", request: toMockAdd(decodeEngineCoreRequest(dataFrames, rules)) };
    } catch (error) {
      if (error instanceof PythonError) throw new UndecodableAddError(error, recoverRequestId(dataFrames));
      throw error;
    }
  }
  const message = decodeInputMessage(frames);
  switch (message.type) {
    case "add":
      throw new Error("unreachable: ADD is decoded by the mock's own request decoder");
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
  schedulerStats?: SchedulerStatsInit;
}

/** How the engine's output thread encodes: its MsgpackEncoder threshold and its vLLM version's structs. */
export interface OutputEncoding {
  auxThreshold: number;
  vllmVersion: MockVllmVersion;
  /** cache_config.block_size (PrefillStats.num_cache_creation_tokens at main). */
  blockSize: number;
}

const PIN_ENCODING: OutputEncoding = {
  auxThreshold: DEFAULT_AUX_THRESHOLD,
  vllmVersion: "main",
  blockSize: 16,
};

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

/** EngineCoreOutputs in `encoding.vllmVersion`'s layout (13-element EngineCoreOutput before main). */
export function encodeOutputs(o: MockOutputs, encoding: OutputEncoding = PIN_ENCODING): Uint8Array[] {
  const { auxThreshold, vllmVersion, blockSize } = encoding;
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
        events: out.events ?? null,
        traceHeaders: out.traceHeaders ?? null,
        prefillStats:
          out.prefillPromptTokens === undefined
            ? null
            : makePrefillStats(out.prefillPromptTokens, blockSize, vllmVersion, out.prefillCachedTokens ?? 0),
      })),
      schedulerStats: o.schedulerStats ?? null,
      finishedRequests: o.finishedRequests ?? null,
      utilityOutput: o.utilityOutput
        ? {
            callId: o.utilityOutput.callId,
            failureMessage: o.utilityOutput.failureMessage,
            result: o.utilityOutput.result ? { typeInfo: null, value: o.utilityOutput.result.value } : null,
          }
        : null,
    },
    { auxThreshold, vllmVersion },
  );
}
