// The request rules, one table. Every rule names where vLLM enforces it (file + function) and the vLLM
// versions it applies to: validation follows the connected engine's version. Rules were read
// from each supported revision's vllm/sampling_params.py, pooling_params.py, lora/request.py,
// multimodal/inputs.py, v1/serial_utils.py and v1/engine/{__init__,core,input_processor}.py; a rule
// without `since` is the same in every supported version (v0.22.1, v0.23.0, v0.24.0, v0.25.1, the pin
// c67fe497 and main after it).
//
// Stages: "decode" rules run while vLLM's engine decodes an ADD (msgspec typed decode of
// EngineCoreRequest and every __post_init__ it triggers, in EngineCoreProc.process_input_sockets, outside
// any try/except: a failure kills the engine's input thread). "frontend" rules are checks vLLM's own
// frontend makes before a request reaches the engine, kept because this client is that frontend.
// "client" rules are what this client can represent on the wire (JavaScript numbers, encodable values).
import { PINNED_VERSION, VLLM_VERSIONS, type VllmVersion, versionHas } from "@vllm-engine-core/protocol";
import type { RequestRule, RuleStage } from "../errors.js";

export type { VllmVersion };

/** The version whose rules apply when none is given: the pinned revision (main at c67fe497). */
export const PIN_VERSION: VllmVersion = PINNED_VERSION;

export interface RuleSpec extends RequestRule {
  /** The versions where this rule applies (oldest first). */
  versions: readonly VllmVersion[];
  /** The upstream change that introduced a rule not every supported version has. */
  change?: { pr: number; commit: string };
}

const MSGSPEC =
  "msgspec typed decode: MsgpackDecoder(EngineCoreRequest) in vllm/v1/engine/core.py EngineCoreProc.process_input_sockets";
const SP = "vllm/sampling_params.py";
const SERIAL = "vllm/v1/serial_utils.py";

type Entry = [id: string, stage: RuleStage, source: string, text: string];

/** Rules that only some versions enforce: the first version, and the upstream PR and commit. */
const SINCE: Readonly<Record<string, { since: VllmVersion; pr: number; commit: string }>> = {
  // validate_thinking_token_budget (739af5c7). v0.22 takes any int: -1 and other negatives reach the
  // sampler's ThinkingBudgetState, which treats -1 as unlimited.
  "SamplingParams.thinking_token_budget.min": {
    since: "0.23",
    pr: 43402,
    commit: "739af5c7e1603b6c9a4d376b52dc7f4b19e1403d",
  },
  // math.isfinite checks (d598d239). Before v0.24 NaN passes every comparison in _verify_args and
  // an infinite temperature or repetition_penalty is in range.
  "SamplingParams.temperature.finite": {
    since: "0.24",
    pr: 45116,
    commit: "d598d239737cfa37bcfcb98886ec3f3557fc7198",
  },
  "SamplingParams.repetition_penalty.finite": {
    since: "0.24",
    pr: 45116,
    commit: "d598d239737cfa37bcfcb98886ec3f3557fc7198",
  },
  "SamplingParams.temperature.max": {
    since: "0.24",
    pr: 44965,
    commit: "ebb0a71ad0b2e2a09ed76b14338465f6b121ebfd",
  },
  // The field exists from 8040ef24; older engines skip the unknown key (SamplingParams is a map
  // struct without forbid_unknown_fields in every version), so they never check it.
  "SamplingParams.stream_interval.min": {
    since: "main",
    pr: 49754,
    commit: "8040ef242662af2f07614d78862c53338f046878",
  },
  // check_removed_pooling_task (e6d1310b). msgspec's PoolingTask Literal check runs first and rejects
  // these names in every version, so over the wire the rule cannot fire before the Literal one.
  "PoolingParams.task.removed": {
    since: "main",
    pr: 48984,
    commit: "e6d1310b2ac52e56e266450693af9de12a871a51",
  },
};

const ENTRIES: readonly Entry[] = [
  // ---- msgspec's type rules (strict typed decode) ----
  [
    "msgspec.int",
    "decode",
    MSGSPEC,
    "an `int` field takes a msgpack int only (a float, even 16.0, or a bool is rejected)",
  ],
  ["msgspec.float", "decode", MSGSPEC, "a `float` field takes a msgpack float or int"],
  ["msgspec.str", "decode", MSGSPEC, "a `str` field takes a msgpack str only"],
  ["msgspec.bool", "decode", MSGSPEC, "a `bool` field takes true or false only"],
  ["msgspec.array", "decode", MSGSPEC, "a list/set/array_like struct field takes a msgpack array"],
  ["msgspec.object", "decode", MSGSPEC, "a dict, dataclass or map struct field takes a msgpack map"],
  ["msgspec.union", "decode", MSGSPEC, "a union field takes one of its member types"],
  ["msgspec.enum", "decode", MSGSPEC, "an Enum field takes one of the members' values"],
  ["msgspec.literal", "decode", MSGSPEC, "a Literal field takes one of the literal values"],
  [
    "msgspec.dict_key",
    "decode",
    MSGSPEC,
    "map keys must have the dict's key type (int for dict[int, float], str for dict[str, ...])",
  ],
  ["msgspec.required", "decode", MSGSPEC, "a field without a default must be present"],
  [
    "msgspec.hashable",
    "decode",
    MSGSPEC,
    "keys of an untyped dict must be hashable in Python (a map is not)",
  ],
  [
    "msgspec.ext",
    "decode",
    `${SERIAL} MsgpackDecoder.ext_hook`,
    "only extension type 3 (raw view) is accepted; any other raises NotImplementedError",
  ],
  // ---- SamplingParams.__post_init__ and what it calls ----
  ["SamplingParams.n.min", "decode", `${SP} SamplingParams._verify_args`, "n must be at least 1"],
  [
    "SamplingParams.n.max",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "n must be at most VLLM_MAX_N_SEQUENCES (16384 unless the engine's environment sets it)",
  ],
  [
    "SamplingParams.presence_penalty.range",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "presence_penalty must be in [-2, 2]",
  ],
  [
    "SamplingParams.frequency_penalty.range",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "frequency_penalty must be in [-2, 2]",
  ],
  [
    "SamplingParams.repetition_penalty.finite",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "repetition_penalty must be a finite number",
  ],
  [
    "SamplingParams.repetition_penalty.positive",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "repetition_penalty must be greater than zero",
  ],
  [
    "SamplingParams.temperature.finite",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "temperature must be a finite number",
  ],
  [
    "SamplingParams.temperature.min",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "temperature must be non-negative",
  ],
  [
    "SamplingParams.temperature.max",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "temperature must be in [0, 2]",
  ],
  ["SamplingParams.top_p.range", "decode", `${SP} SamplingParams._verify_args`, "top_p must be in (0, 1]"],
  [
    "SamplingParams.top_k.min",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "top_k must be 0 (disable), -1 (disable) or at least 1",
  ],
  ["SamplingParams.min_p.range", "decode", `${SP} SamplingParams._verify_args`, "min_p must be in [0, 1]"],
  [
    "SamplingParams.max_tokens.min",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "max_tokens must be at least 1",
  ],
  [
    "SamplingParams.min_tokens.min",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "min_tokens must be greater than or equal to 0",
  ],
  [
    "SamplingParams.min_tokens.max",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "min_tokens must be less than or equal to max_tokens (16 when not given)",
  ],
  [
    "SamplingParams.stream_interval.min",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "stream_interval must be at least 1",
  ],
  [
    "SamplingParams.logprobs.min",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "logprobs must be non-negative or -1",
  ],
  [
    "SamplingParams.prompt_logprobs.min",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "prompt_logprobs must be non-negative or -1",
  ],
  [
    "SamplingParams.stop.empty",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "stop cannot contain an empty string",
  ],
  [
    "SamplingParams.stop.detokenize",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "stop strings are only supported when detokenize is True",
  ],
  [
    "SamplingParams.bad_words.empty",
    "decode",
    `${SP} SamplingParams._verify_args`,
    "bad_words cannot contain an empty string",
  ],
  [
    "SamplingParams.greedy.n",
    "decode",
    `${SP} SamplingParams._verify_greedy_sampling`,
    "n must be 1 when using greedy sampling (temperature < 1e-5, after temperatures in (0, 0.01) are raised to 0.01)",
  ],
  [
    "SamplingParams.thinking_token_budget.min",
    "decode",
    `${SP} validate_thinking_token_budget`,
    "thinking_token_budget must be a non-negative integer or -1 for unlimited",
  ],
  // ---- nested dataclasses and structs ----
  [
    "StructuredOutputsParams.kinds.multiple",
    "decode",
    `${SP} StructuredOutputsParams.__post_init__`,
    "only one kind of structured outputs constraint may be set (json, regex, choice, grammar, json_object, structural_tag)",
  ],
  [
    "StructuredOutputsParams.kinds.none",
    "decode",
    `${SP} StructuredOutputsParams.__post_init__`,
    "one kind of structured outputs constraint must be set (json, regex, choice, grammar, json_object or structural_tag)",
  ],
  [
    "RepetitionDetectionParams.sizes",
    "decode",
    `${SP} RepetitionDetectionParams.__post_init__`,
    "max_pattern_size and min_pattern_size must be >= 0, with min_pattern_size <= max_pattern_size",
  ],
  [
    "RepetitionDetectionParams.min_count",
    "decode",
    `${SP} RepetitionDetectionParams.__post_init__`,
    "min_count must be >= 2 when max_pattern_size > 0",
  ],
  [
    "LoRARequest.lora_int_id.min",
    "decode",
    "vllm/lora/request.py LoRARequest.__post_init__",
    "lora_int_id must be > 0",
  ],
  [
    "LoRARequest.lora_path.empty",
    "decode",
    "vllm/lora/request.py LoRARequest.__post_init__",
    'lora_path cannot be empty (an assert: the default "" always fails)',
  ],
  [
    "PoolingParams.task.removed",
    "decode",
    "vllm/pooling_params.py PoolingParams.__post_init__ (vllm/tasks.py check_removed_pooling_task)",
    "the `score` and `encode` pooling tasks were removed",
  ],
  [
    "PoolingParams.output_kind",
    "decode",
    "vllm/pooling_params.py PoolingParams.__post_init__",
    "for pooling, output_kind has to be FINAL_ONLY (2)",
  ],
  // ---- custom types decoded by MsgpackDecoder.dec_hook ----
  ["tensor.layout", "decode", `${SERIAL} MsgpackDecoder._decode_tensor`, "a tensor is [dtype, shape, data]"],
  [
    "tensor.dtype",
    "decode",
    `${SERIAL} MsgpackDecoder._decode_tensor`,
    'dtype must name a torch dtype (getattr(torch, dtype)), e.g. "float32", "bfloat16", "int64"',
  ],
  [
    "tensor.size",
    "decode",
    `${SERIAL} MsgpackDecoder._decode_tensor`,
    "the data must hold exactly numel(shape) elements of dtype (an empty buffer needs a 0 in shape)",
  ],
  [
    "mm.item",
    "decode",
    `${SERIAL} MsgpackDecoder._decode_mm_item`,
    "a MultiModalKwargsItem is a map of field name to {data, field}",
  ],
  [
    "mm.elem",
    "decode",
    `${SERIAL} MsgpackDecoder._decode_mm_field_elem`,
    "a field element is a map with exactly the keys data and field (MultiModalFieldElem(**obj))",
  ],
  [
    "mm.nested",
    "decode",
    `${SERIAL} MsgpackDecoder._decode_nested_tensors`,
    "nested tensors are a number, a tensor, or a list of nested tensors",
  ],
  [
    "mm.field",
    "decode",
    `${SERIAL} MsgpackDecoder._decode_mm_field_elem`,
    "field is [factory name, kwargs] with a factory of MultiModalFieldConfig: batched, flat or shared",
  ],
  [
    "mm.field.kwargs",
    "decode",
    "vllm/multimodal/inputs.py MultiModalFieldConfig.batched/flat/shared",
    "the kwargs must match the factory's parameters (flat: slices, dim, keep_on_cpu; shared: batch_size, keep_on_cpu; batched: keep_on_cpu)",
  ],
  [
    "mm.slices",
    "decode",
    `${SERIAL} MsgpackDecoder._decode_nested_slices`,
    "flat slices are a list of [start, stop, step] slices (1 to 3 items each) or a list of such lists",
  ],
  // ---- the client's frontend role ----
  [
    "frontend.prompt.empty",
    "frontend",
    "vllm/v1/engine/input_processor.py InputProcessor._validate_prompt_len",
    "the prompt cannot be empty",
  ],
  [
    "frontend.prompt.max_model_len",
    "frontend",
    "vllm/v1/engine/input_processor.py InputProcessor._validate_prompt_len",
    "the prompt must not be longer than the engine's max_model_len",
  ],
  [
    "frontend.prompt.max_model_len.generate",
    "frontend",
    "vllm/v1/engine/input_processor.py InputProcessor._validate_prompt_len",
    "a generation prompt must leave room for one output token: shorter than the engine's max_model_len",
  ],
  [
    "frontend.params.one",
    "frontend",
    "vllm/v1/engine/input_processor.py InputProcessor.process_inputs",
    "exactly one of samplingParams and poolingParams is set",
  ],
  [
    "frontend.max_tokens.null",
    "frontend",
    "vllm/v1/request.py Request.__init__ (assert) / InputProcessor fills it",
    "maxTokens must be set: the engine asserts max_tokens is not None",
  ],
  // ---- what this client can put on the wire ----
  ["client.request", "client", "packages/client (EngineCoreClient.call)", "the request is an object"],
  [
    "client.prompt_embeds",
    "client",
    "packages/client (as in vLLM's Rust client)",
    "prompt embeddings are not supported by this client",
  ],
  [
    "client.int.safe",
    "client",
    "packages/protocol codec",
    "a JavaScript number in an int field must be a safe integer (pass a bigint beyond 2^53)",
  ],
  ["client.int.range", "client", "packages/protocol codec (msgpack)", "an int must fit in int64 or uint64"],
  ["client.float", "client", "packages/protocol codec", "a float field takes a number or a Float64"],
  [
    "client.any",
    "client",
    "packages/protocol codec (encodeAny)",
    "an opaque value must be plain data (numbers, bigints, strings, booleans, null, arrays, Sets, Maps, plain objects, Uint8Array, Float64, MsgpackExt)",
  ],
  [
    "client.tensor",
    "client",
    "packages/protocol codec (TENSOR)",
    "a tensor is {dtype: string, shape: non-negative integers, data: a typed array}",
  ],
];

export const REQUEST_RULES: ReadonlyMap<string, RuleSpec> = new Map(
  ENTRIES.map(([id, stage, source, text]): [string, RuleSpec] => {
    const since = SINCE[id];
    if (since === undefined) return [id, { id, stage, source, text, versions: VLLM_VERSIONS }];
    const versions = VLLM_VERSIONS.filter((v) => versionHas(v, since.since));
    return [
      id,
      {
        id,
        stage,
        source,
        text,
        since: since.since,
        versions,
        change: { pr: since.pr, commit: since.commit },
      },
    ];
  }),
);

/**
 * The ids of the rules in force for an engine of `version`, or for a request that any engine of
 * `versions` may receive (every rule of every one of them: the most restrictive set).
 */
export function rulesFor(version: VllmVersion | readonly VllmVersion[] = PIN_VERSION): ReadonlySet<string> {
  const versions: readonly VllmVersion[] = typeof version === "string" ? [version] : version;
  for (const v of versions) {
    if (!VLLM_VERSIONS.includes(v)) {
      throw new RangeError(`unknown vLLM version ${JSON.stringify(v)} (one of ${VLLM_VERSIONS.join(", ")})`);
    }
  }
  const ids = new Set<string>();
  for (const rule of REQUEST_RULES.values()) {
    if (versions.some((v) => rule.versions.includes(v))) ids.add(rule.id);
  }
  return ids;
}
