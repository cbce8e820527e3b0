// vllm/sampling_params.py at the pin, as msgspec decodes it: SamplingParams (a map Struct) with its
// nested pydantic dataclasses StructuredOutputsParams and RepetitionDetectionParams; msgspec runs each
// __post_init__ as soon as that object is decoded. Values are snake_case, as on the wire. Where a
// release's file differs (DecodeRules, ../versions.ts), the checks follow the version the mock plays.

import { pyFloatRepr as f } from "../python-values.js";
import { type DecodeRules, PIN_DECODE_RULES } from "../versions.js";
import {
  decodeAny,
  decodeBool,
  decodeDict,
  decodeFloat,
  decodeInt,
  decodeList,
  decodeMapStruct,
  decodeMember,
  decodeStr,
  decodeStrAnyDict,
  expected,
  type FieldSpec,
  mapEntries,
  nullable,
} from "./msgspec.js";
import { PythonError, validationError, vllmValidationError } from "./python-errors.js";

const SAMPLING_EPS = 1e-5;
const MAX_TEMP = 1e-2;

/** envs.VLLM_MAX_N_SEQUENCES (vllm/envs.py): read from the environment like vLLM, default 16384. */
function maxNSequences(): bigint {
  return BigInt(process.env.VLLM_MAX_N_SEQUENCES ?? "16384");
}

/** RequestOutputKind (Enum): CUMULATIVE 0, DELTA 1, FINAL_ONLY 2. */
export const decodeRequestOutputKind = (v: unknown, path: string) => decodeMember(v, path, "int", [0, 1, 2]);

const int = decodeInt;
const float = decodeFloat;
const str = decodeStr;
const bool = decodeBool;
const ints = (v: unknown, path: string) => decodeList(v, path, int);
const strs = (v: unknown, path: string) => decodeList(v, path, str);

/** `dict` (unparameterised): any map, values Any. */
export function decodeUntypedDict(v: unknown, path: string): unknown {
  mapEntries(v, path);
  return decodeAny(v, path);
}

/** `str | dict | None` */
function strOrDict(v: unknown, path: string): unknown {
  if (typeof v === "string") return v;
  if (Array.isArray(v) || typeof v !== "object" || v === null) throw expected("str | object", v, path);
  return decodeUntypedDict(v, path);
}

/** `str | list[str] | None` */
function strOrStrList(v: unknown, path: string): string | string[] {
  if (typeof v === "string") return v;
  if (!Array.isArray(v)) throw expected("str | array", v, path);
  return strs(v, path);
}

// ---- StructuredOutputsParams -------------------------------------------------------------------------

const STRUCTURED_OUTPUTS_FIELDS: FieldSpec[] = [
  { name: "json", decode: nullable(strOrDict), default: () => null },
  { name: "regex", decode: nullable(str), default: () => null },
  { name: "choice", decode: nullable(strs), default: () => null },
  { name: "grammar", decode: nullable(str), default: () => null },
  { name: "json_object", decode: nullable(bool), default: () => null },
  { name: "disable_any_whitespace", decode: bool, default: () => false },
  { name: "disable_additional_properties", decode: bool, default: () => false },
  { name: "whitespace_pattern", decode: nullable(str), default: () => null },
  { name: "structural_tag", decode: nullable(str), default: () => null },
  { name: "_backend", decode: nullable(str), default: () => null },
  { name: "_backend_was_auto", decode: bool, default: () => false },
];

/** StructuredOutputsParams.__post_init__: "Validate that some fields are mutually exclusive." */
function structuredOutputsPostInit(self: Record<string, unknown>): void {
  const count = ["json", "regex", "choice", "grammar", "json_object", "structural_tag"].filter(
    (k) => self[k] !== null,
  ).length;
  if (count > 1) {
    throw vllmValidationError(
      `You can only use one kind of structured outputs constraint but multiple are specified: ${JSON.stringify(self)}`,
    );
  }
  if (count < 1) {
    throw vllmValidationError(
      `You must use one kind of structured outputs constraint but none are specified: ${JSON.stringify(self)}`,
    );
  }
}

function decodeStructuredOutputsParams(
  v: unknown,
  path: string,
  rules: DecodeRules,
): Record<string, unknown> {
  const self = decodeMapStruct(v, path, STRUCTURED_OUTPUTS_FIELDS);
  postInit(rules, path, () => structuredOutputsPostInit(self));
  return self;
}

// ---- RepetitionDetectionParams -----------------------------------------------------------------------

const REPETITION_FIELDS: FieldSpec[] = [
  { name: "max_pattern_size", decode: int, default: () => 0n },
  { name: "min_pattern_size", decode: int, default: () => 0n },
  { name: "min_count", decode: int, default: () => 0n },
];

function repetitionDetectionPostInit(self: Record<string, unknown>): void {
  const max = self.max_pattern_size as bigint;
  const min = self.min_pattern_size as bigint;
  if (max < 0n || min < 0n || min > max) {
    throw vllmValidationError(
      "max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. " +
        "Set both to 0 to disable repetitive pattern detection.",
    );
  }
  if (max > 0n && (self.min_count as bigint) < 2n) {
    throw vllmValidationError(
      "min_count must be >= 2 to detect repetitive patterns in engine output. If you do not wish to detect " +
        "repetitive patterns, set max_pattern_size to 0.",
    );
  }
}

function decodeRepetitionDetectionParams(
  v: unknown,
  path: string,
  rules: DecodeRules,
): Record<string, unknown> {
  const self = decodeMapStruct(v, path, REPETITION_FIELDS);
  postInit(rules, path, () => repetitionDetectionPostInit(self));
  return self;
}

/**
 * Runs a __post_init__ as msgspec does. Up to v0.25 vLLM raises ValueError there (VLLMValidationError
 * is a ValueError subclass): msgspec wraps it into msgspec.ValidationError with the struct's path
 * (ms_maybe_wrap_validation_error). At main VLLMValidationError is no ValueError and propagates as is.
 */
export function postInit(rules: DecodeRules, path: string, run: () => void): void {
  try {
    run();
  } catch (error) {
    if (
      rules.validationErrorIsValueError &&
      error instanceof PythonError &&
      error.type === "vllm.exceptions.VLLMValidationError"
    ) {
      throw validationError(error.text, path);
    }
    throw error;
  }
}

// ---- SamplingParams ----------------------------------------------------------------------------------

/** SamplingParams' declared fields in `rules.version` (a key the version lacks is skipped on decode). */
function samplingFields(rules: DecodeRules): FieldSpec[] {
  const fields: FieldSpec[] = [
    { name: "n", decode: int, default: () => 1n },
    { name: "presence_penalty", decode: float, default: () => 0 },
    { name: "frequency_penalty", decode: float, default: () => 0 },
    { name: "repetition_penalty", decode: float, default: () => 1 },
    { name: "temperature", decode: float, default: () => 1 },
    { name: "top_p", decode: float, default: () => 1 },
    { name: "top_k", decode: int, default: () => 0n },
    { name: "min_p", decode: float, default: () => 0 },
    { name: "seed", decode: nullable(int), default: () => null },
    { name: "stop", decode: nullable(strOrStrList), default: () => null },
    { name: "stop_token_ids", decode: nullable(ints), default: () => null },
    { name: "ignore_eos", decode: bool, default: () => false },
    { name: "max_tokens", decode: nullable(int), default: () => 16n },
    { name: "min_tokens", decode: int, default: () => 0n },
    { name: "logprobs", decode: nullable(int), default: () => null },
    { name: "prompt_logprobs", decode: nullable(int), default: () => null },
    { name: "logprob_token_ids", decode: nullable(ints), default: () => null },
    { name: "flat_logprobs", decode: bool, default: () => false },
    { name: "detokenize", decode: bool, default: () => true },
    { name: "skip_special_tokens", decode: bool, default: () => true },
    { name: "spaces_between_special_tokens", decode: bool, default: () => true },
    { name: "include_stop_str_in_output", decode: bool, default: () => false },
    { name: "output_kind", decode: decodeRequestOutputKind, default: () => 0 },
    // 8040ef24 (#49754): declared at main only; older SamplingParams ignore the key.
    ...(rules.streamInterval
      ? [{ name: "stream_interval", decode: nullable(int), default: () => null }]
      : []),
    { name: "skip_clone", decode: bool, default: () => false },
    { name: "output_text_buffer_length", decode: int, default: () => 0n },
    { name: "_eos_token_id", decode: nullable(int), default: () => null },
    { name: "_all_stop_token_ids", decode: (v, p) => new Set(ints(v, p)), default: () => new Set() },
    {
      name: "structured_outputs",
      decode: nullable((v, p) => decodeStructuredOutputsParams(v, p, rules)),
      default: () => null,
    },
    { name: "logit_bias", decode: nullable((v, p) => decodeDict(v, p, int, float)), default: () => null },
    { name: "allowed_token_ids", decode: nullable(ints), default: () => null },
    { name: "extra_args", decode: nullable(decodeStrAnyDict), default: () => null },
    { name: "routed_experts_prompt_start", decode: int, default: () => 0n },
    { name: "bad_words", decode: nullable(strs), default: () => null },
    { name: "_bad_words_token_ids", decode: nullable((v, p) => decodeList(v, p, ints)), default: () => null },
    { name: "skip_reading_prefix_cache", decode: nullable(bool), default: () => null },
    { name: "thinking_token_budget", decode: nullable(int), default: () => null },
    {
      name: "repetition_detection",
      decode: nullable((v, p) => decodeRepetitionDetectionParams(v, p, rules)),
      default: () => null,
    },
  ];
  return fields;
}

const FIELDS_BY_VERSION = new Map<DecodeRules["version"], FieldSpec[]>();

/** validate_thinking_token_budget (a bool or float cannot arrive here: msgspec typed the field int). */
function validateThinkingTokenBudget(value: bigint | null): bigint | null {
  if (value === null) return null;
  if (value === -1n) return null;
  if (value < 0n) {
    throw vllmValidationError("`thinking_token_budget` must be a non-negative integer or -1 for unlimited.", {
      parameter: "thinking_token_budget",
      value,
    });
  }
  return value;
}

type Self = Record<string, unknown> & {
  n: bigint;
  temperature: number;
  top_p: number;
  top_k: bigint;
  min_p: number;
  max_tokens: bigint | null;
  min_tokens: bigint;
  stop: string | string[] | null;
  stop_token_ids: bigint[] | null;
  bad_words: string[] | null;
};

function verifyArgs(self: Self, rules: DecodeRules): void {
  const fail = (message: string, parameter?: string, value?: unknown) => {
    throw vllmValidationError(message, parameter === undefined ? {} : { parameter, value });
  };
  const pp = self.presence_penalty as number;
  const fp = self.frequency_penalty as number;
  const rp = self.repetition_penalty as number;
  const t = self.temperature;
  if (self.n < 1n) fail(`n must be at least 1, got ${self.n}.`);
  const maxN = maxNSequences();
  if (self.n > maxN) {
    fail(
      `n must be at most ${maxN}, got ${self.n}. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.`,
    );
  }
  if (!(-2 <= pp && pp <= 2)) fail(`presence_penalty must be in [-2, 2], got ${f(pp)}.`);
  if (!(-2 <= fp && fp <= 2)) fail(`frequency_penalty must be in [-2, 2], got ${f(fp)}.`);
  // The finite checks and the upper temperature bound exist from v0.24 (ebb0a71a, #44965).
  if (rules.temperatureBounded && !Number.isFinite(rp))
    fail(`repetition_penalty must be a finite number, got ${f(rp)}.`);
  if (rp <= 0) fail(`repetition_penalty must be greater than zero, got ${f(rp)}.`);
  if (rules.temperatureBounded && !Number.isFinite(t))
    fail(`temperature must be a finite number, got ${f(t)}.`, "temperature", t);
  if (t < 0) fail(`temperature must be non-negative, got ${f(t)}.`, "temperature", t);
  if (rules.temperatureBounded && t > 2)
    fail(`temperature must be in [0, 2], got ${f(t)}.`, "temperature", t);
  if (!(0 < self.top_p && self.top_p <= 1))
    fail(`top_p must be in (0, 1], got ${f(self.top_p)}.`, "top_p", self.top_p);
  if (self.top_k < -1n) fail(`top_k must be 0 (disable), or at least 1, got ${self.top_k}.`);
  if (!(0 <= self.min_p && self.min_p <= 1)) fail(`min_p must be in [0, 1], got ${f(self.min_p)}.`);
  if (self.max_tokens !== null && self.max_tokens < 1n) {
    fail(`max_tokens must be at least 1, got ${self.max_tokens}.`, "max_tokens", self.max_tokens);
  }
  if (self.min_tokens < 0n) fail(`min_tokens must be greater than or equal to 0, got ${self.min_tokens}.`);
  if (self.max_tokens !== null && self.min_tokens > self.max_tokens) {
    fail(`min_tokens must be less than or equal to max_tokens=${self.max_tokens}, got ${self.min_tokens}.`);
  }
  const si = (self.stream_interval ?? null) as bigint | null; // absent before main
  if (si !== null && si < 1n) fail(`stream_interval must be at least 1, got ${si}.`, "stream_interval", si);
  const lp = self.logprobs as bigint | null;
  if (lp !== null && lp !== -1n && lp < 0n)
    fail(`logprobs must be non-negative or -1, got ${lp}.`, "logprobs", lp);
  const plp = self.prompt_logprobs as bigint | null;
  if (plp !== null && plp !== -1n && plp < 0n) {
    fail(`prompt_logprobs must be non-negative or -1, got ${plp}.`, "prompt_logprobs", plp);
  }
  const stop = self.stop as string[];
  if (stop.some((s) => !s)) fail("stop cannot contain an empty string.");
  if (stop.length > 0 && !self.detokenize) {
    fail("stop strings are only supported when detokenize is True. Set detokenize=True to use stop.");
  }
  const badWords = self.bad_words as string[];
  if (badWords.some((w) => !w))
    fail(`bad_words cannot contain an empty string. Got bad_words=${JSON.stringify(badWords)}`);
}

/** SamplingParams.__post_init__: normalisations, then _verify_args, then the greedy check. */
function samplingParamsPostInit(self: Self, rules: DecodeRules): void {
  if (0 < self.temperature && self.temperature < MAX_TEMP)
    self.temperature = Math.max(self.temperature, MAX_TEMP);
  if (self.seed === -1n) self.seed = null;
  // v0.23+ (739af5c7, #43402); v0.22.1's __post_init__ keeps whatever int was sent, -1 included.
  if (rules.thinkingTokenBudgetChecked)
    self.thinking_token_budget = validateThinkingTokenBudget(self.thinking_token_budget as bigint | null);
  if (self.stop === null) self.stop = [];
  else if (typeof self.stop === "string") self.stop = [self.stop];
  if (self.stop_token_ids === null) self.stop_token_ids = [];
  if (self.bad_words === null) self.bad_words = [];
  const stop = self.stop as string[];
  if (stop.length > 0 && !self.include_stop_str_in_output) {
    self.output_text_buffer_length = BigInt(Math.max(...stop.map((s) => [...s].length)) - 1);
  }
  verifyArgs(self, rules);
  if (self.temperature < SAMPLING_EPS) {
    self.top_p = 1;
    self.top_k = 0n;
    self.min_p = 0;
    if (self.n > 1n) throw vllmValidationError(`n must be 1 when using greedy sampling, got ${self.n}.`);
  }
  const all = self._all_stop_token_ids as Set<bigint>;
  for (const id of self.stop_token_ids) all.add(id);
  if (self.skip_reading_prefix_cache === null) self.skip_reading_prefix_cache = self.prompt_logprobs !== null;
}

export type DecodedSamplingParams = Self;

export function decodeSamplingParams(
  v: unknown,
  path: string,
  rules: DecodeRules = PIN_DECODE_RULES,
): DecodedSamplingParams {
  let fields = FIELDS_BY_VERSION.get(rules.version);
  if (fields === undefined) {
    fields = samplingFields(rules);
    FIELDS_BY_VERSION.set(rules.version, fields);
  }
  const self = decodeMapStruct(v, path, fields) as Self;
  postInit(rules, path, () => samplingParamsPostInit(self, rules));
  return self;
}
