// SamplingParams as vLLM decodes it (vllm/sampling_params.py, v0.22.1 to main): msgspec's field types, then
// SamplingParams.__post_init__ — its normalisations, validate_thinking_token_budget, _verify_args and
// _verify_greedy_sampling — in the order vLLM runs them. msgspec runs __post_init__ during the decode.
// The value is the sparse camelCase view the codec writes: an undefined key is left out (its default).
import type { Checker } from "./checker.js";
import {
  any,
  bool,
  entries,
  float,
  int,
  isPlainObject,
  list,
  nullable,
  str,
  strMap,
  structObject,
  wireTypeName,
} from "./msgspec-types.js";
import { verifyRepetitionDetectionParams } from "./repetition-detection.js";
import { verifyStructuredOutputsParams } from "./structured-outputs.js";

/** _SAMPLING_EPS and _MAX_TEMP of vllm/sampling_params.py. */
const SAMPLING_EPS = 1e-5;
const MAX_TEMP = 1e-2;
/** envs.VLLM_MAX_N_SEQUENCES default (vllm/envs.py); the engine's environment may raise it. */
const MAX_N_SEQUENCES = 16384n;

/** RequestOutputKind (an Enum of ints): CUMULATIVE 0, DELTA 1, FINAL_ONLY 2. */
export function outputKind(c: Checker, field: string, v: unknown): number {
  if (typeof v === "number" && Number.isInteger(v)) {
    if (v !== 0 && v !== 1 && v !== 2) c.fail("msgspec.enum", field, v, `Invalid enum value ${v}`);
    return v;
  }
  if (typeof v === "bigint") {
    return c.fail("msgspec.enum", field, v, "RequestOutputKind is the number 0, 1 or 2 (not a bigint)");
  }
  return c.fail("msgspec.int", field, v, `Expected \`int\`, got \`${wireTypeName(v)}\``);
}

/** dict[int, float] (logit_bias): a Map with integer keys, or an object whose keys are integer strings. */
function logitBias(c: Checker, field: string, v: unknown): void {
  const fromObject = isPlainObject(v);
  for (const [k, bias] of entries(c, field, v)) {
    const at = `${field}[${String(k)}]`;
    if (fromObject) {
      // The codec turns integer-string keys into msgpack ints; any other key would be a str on the wire.
      if (!/^-?\d+$/.test(k as string)) {
        c.fail("msgspec.dict_key", at, k, "Expected `int`, got `str` (logit_bias keys are token ids)");
      }
      int(c, at, Number(k));
    } else {
      int(c, at, k);
    }
    float(c, at, bias);
  }
}

interface Decoded {
  n: bigint;
  presencePenalty: number;
  frequencyPenalty: number;
  repetitionPenalty: number;
  temperature: number;
  topP: number;
  topK: bigint;
  minP: number;
  stop: string[] | string | null;
  stopTokenIds: bigint[] | null;
  maxTokens: bigint | null;
  minTokens: bigint;
  logprobs: bigint | null;
  promptLogprobs: bigint | null;
  detokenize: boolean;
  streamInterval: bigint | null;
  badWords: string[] | null;
  thinkingTokenBudget: bigint | null;
}

/** msgspec's typed decode of every SamplingParams field (nested structs run their own __post_init__). */
function decodeFields(c: Checker, at: string, sp: Record<string, unknown>): Decoded {
  const f = (key: string) => `${at}.${key}`;
  const opt = <T>(key: string, dflt: T, read: (field: string, v: unknown) => T): T => {
    const v = sp[key];
    return v === undefined ? dflt : read(f(key), v);
  };
  const optNull = <T>(key: string, read: (field: string, v: unknown) => T): T | null => {
    const v = sp[key];
    return v === undefined ? null : nullable(v, (x) => read(f(key), x));
  };
  const i = (field: string, v: unknown) => int(c, field, v);
  const fl = (field: string, v: unknown) => float(c, field, v);
  const b = (field: string, v: unknown) => bool(c, field, v);
  const s = (field: string, v: unknown) => str(c, field, v);
  const ints = (field: string, v: unknown) => list(c, field, v, i);
  const strs = (field: string, v: unknown) => list(c, field, v, s);

  const out: Decoded = {
    n: opt("n", 1n, i),
    presencePenalty: opt("presencePenalty", 0, fl),
    frequencyPenalty: opt("frequencyPenalty", 0, fl),
    repetitionPenalty: opt("repetitionPenalty", 1, fl),
    temperature: opt("temperature", 1, fl),
    topP: opt("topP", 1, fl),
    topK: opt("topK", 0n, i),
    minP: opt("minP", 0, fl),
    stop: null,
    stopTokenIds: optNull("stopTokenIds", ints),
    maxTokens: sp.maxTokens === undefined ? 16n : optNull("maxTokens", i),
    minTokens: opt("minTokens", 0n, i),
    logprobs: optNull("logprobs", i),
    promptLogprobs: optNull("promptLogprobs", i),
    detokenize: opt("detokenize", true, b),
    streamInterval: optNull("streamInterval", i),
    badWords: optNull("badWords", strs),
    thinkingTokenBudget: optNull("thinkingTokenBudget", i),
  };
  optNull("seed", i);
  // `str | list[str] | None`
  out.stop = optNull("stop", (field, v) => (typeof v === "string" ? v : unionStrList(c, field, v)));
  opt("ignoreEos", false, b);
  optNull("logprobTokenIds", ints);
  for (const key of [
    "flatLogprobs",
    "skipSpecialTokens",
    "spacesBetweenSpecialTokens",
    "includeStopStrInOutput",
    "skipClone",
  ]) {
    opt(key, false, b);
  }
  opt("outputKind", 0, (field, v) => outputKind(c, field, v));
  opt("outputTextBufferLength", 0n, i);
  optNull("eosTokenId", i);
  opt("allStopTokenIds", [], ints); // set[int]: not Optional
  optNull("structuredOutputs", (field, v) => verifyStructuredOutputsParams(c, field, v));
  optNull("logitBias", (field, v) => logitBias(c, field, v));
  optNull("allowedTokenIds", ints);
  optNull("extraArgs", (field, v) => strMap(c, field, v, (path, x) => any(c, path, x)));
  opt("routedExpertsPromptStart", 0n, i);
  optNull("badWordsTokenIds", (field, v) => list(c, field, v, ints));
  optNull("skipReadingPrefixCache", b);
  optNull("repetitionDetection", (field, v) => verifyRepetitionDetectionParams(c, field, v));
  return out;
}

function unionStrList(c: Checker, field: string, v: unknown): string[] {
  if (!Array.isArray(v) && !(v instanceof Set)) {
    c.fail("msgspec.union", field, v, `Expected \`str | array\`, got \`${wireTypeName(v)}\``);
  }
  return list(c, field, v, (path, x) => str(c, path, x));
}

/** SamplingParams: msgspec field types, then __post_init__ (vllm/sampling_params.py). */
export function verifySamplingParams(c: Checker, at: string, value: unknown): void {
  const sp = structObject(c, at, value, "object");
  const d = decodeFields(c, at, sp);
  const f = (key: string) => `${at}.${key}`;

  // __post_init__: 0 < temperature < _MAX_TEMP is raised to _MAX_TEMP (logged, not rejected).
  let temperature = d.temperature;
  if (temperature > 0 && temperature < MAX_TEMP) temperature = MAX_TEMP;
  // validate_thinking_token_budget (from v0.23): -1 means unlimited (None); other negatives are rejected.
  const budget = d.thinkingTokenBudget;
  c.require(
    budget === null || budget >= -1n,
    "SamplingParams.thinking_token_budget.min",
    f("thinkingTokenBudget"),
    budget,
  );
  // stop: None → [], str → [str]; stop_token_ids / bad_words: None → [].
  const stop = d.stop === null ? [] : typeof d.stop === "string" ? [d.stop] : d.stop;
  const badWords = d.badWords ?? [];

  // _verify_args, in vLLM's order.
  c.require(d.n >= 1n, "SamplingParams.n.min", f("n"), d.n);
  c.require(d.n <= MAX_N_SEQUENCES, "SamplingParams.n.max", f("n"), d.n);
  const inRange = (x: number, lo: number, hi: number) => x >= lo && x <= hi; // false for NaN
  c.require(
    inRange(d.presencePenalty, -2, 2),
    "SamplingParams.presence_penalty.range",
    f("presencePenalty"),
    d.presencePenalty,
  );
  c.require(
    inRange(d.frequencyPenalty, -2, 2),
    "SamplingParams.frequency_penalty.range",
    f("frequencyPenalty"),
    d.frequencyPenalty,
  );
  c.require(
    Number.isFinite(d.repetitionPenalty),
    "SamplingParams.repetition_penalty.finite",
    f("repetitionPenalty"),
    d.repetitionPenalty,
  );
  // `repetition_penalty <= 0.0` as vLLM writes it: before v0.24 (no finiteness check) NaN passes.
  c.require(
    !(d.repetitionPenalty <= 0),
    "SamplingParams.repetition_penalty.positive",
    f("repetitionPenalty"),
    d.repetitionPenalty,
  );
  c.require(
    Number.isFinite(temperature),
    "SamplingParams.temperature.finite",
    f("temperature"),
    d.temperature,
  );
  c.require(!(temperature < 0), "SamplingParams.temperature.min", f("temperature"), d.temperature);
  c.require(!(temperature > 2), "SamplingParams.temperature.max", f("temperature"), d.temperature);
  c.require(d.topP > 0 && d.topP <= 1, "SamplingParams.top_p.range", f("topP"), d.topP);
  c.require(d.topK >= -1n, "SamplingParams.top_k.min", f("topK"), d.topK);
  c.require(inRange(d.minP, 0, 1), "SamplingParams.min_p.range", f("minP"), d.minP);
  c.require(
    d.maxTokens === null || d.maxTokens >= 1n,
    "SamplingParams.max_tokens.min",
    f("maxTokens"),
    d.maxTokens,
  );
  c.require(d.minTokens >= 0n, "SamplingParams.min_tokens.min", f("minTokens"), d.minTokens);
  if (d.maxTokens !== null) {
    c.require(
      d.minTokens <= d.maxTokens,
      "SamplingParams.min_tokens.max",
      f("minTokens"),
      d.minTokens,
      `min_tokens must be less than or equal to max_tokens=${d.maxTokens}${sp.maxTokens === undefined ? " (the default)" : ""}, got ${d.minTokens}`,
    );
  }
  c.require(
    d.streamInterval === null || d.streamInterval >= 1n,
    "SamplingParams.stream_interval.min",
    f("streamInterval"),
    d.streamInterval,
  );
  c.require(
    d.logprobs === null || d.logprobs >= -1n,
    "SamplingParams.logprobs.min",
    f("logprobs"),
    d.logprobs,
  );
  c.require(
    d.promptLogprobs === null || d.promptLogprobs >= -1n,
    "SamplingParams.prompt_logprobs.min",
    f("promptLogprobs"),
    d.promptLogprobs,
  );
  const emptyStop = stop.findIndex((s) => s === "");
  c.require(
    emptyStop < 0,
    "SamplingParams.stop.empty",
    typeof d.stop === "string" ? f("stop") : f(`stop[${emptyStop}]`),
    "",
  );
  c.require(
    stop.length === 0 || d.detokenize,
    "SamplingParams.stop.detokenize",
    f("detokenize"),
    d.detokenize,
  );
  const emptyWord = badWords.findIndex((s) => s === "");
  c.require(emptyWord < 0, "SamplingParams.bad_words.empty", f(`badWords[${emptyWord}]`), "");

  // Zero temperature means greedy sampling: _verify_greedy_sampling.
  if (temperature < SAMPLING_EPS) {
    c.require(
      d.n <= 1n,
      "SamplingParams.greedy.n",
      f("n"),
      d.n,
      `n must be 1 when using greedy sampling (temperature ${d.temperature}), got ${d.n}`,
    );
  }
}
