// validateRequest against vLLM's decode-time rules (vllm/sampling_params.py, vllm/lora/request.py,
// vllm/pooling_params.py, vllm/v1/serial_utils.py and msgspec's type rules at the pinned revision):
// each rule's boundary is accepted, the first value past it refused with the field, value and rule.
import { Float64, MsgpackExt } from "@vllm-engine-core/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidRequestError } from "../src/errors.js";
import { type CallRequest, validateRequest } from "../src/index.js";
import { REQUEST_RULES, rulesFor } from "../src/validation/rules.js";
import { chatRequest, collect, connectToMockEngine, type Harness } from "./helpers.js";

const base = (extra: Record<string, unknown> = {}): CallRequest =>
  ({ requestId: "r", promptTokenIds: [1, 2, 3], samplingParams: { maxTokens: 8 }, ...extra }) as CallRequest;
const sampling = (sp: Record<string, unknown>) => base({ samplingParams: { maxTokens: 8, ...sp } });

function refusal(request: unknown): InvalidRequestError {
  try {
    validateRequest(request, { maxModelLen: 64 });
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return error as InvalidRequestError;
  }
  throw new Error(`accepted ${JSON.stringify(request, (_k, v) => (typeof v === "bigint" ? `${v}n` : v))}`);
}

function expectRefused(request: unknown, rule: string, field: string | RegExp): InvalidRequestError {
  const error = refusal(request);
  expect(error.rule?.id, error.message).toBe(rule);
  if (typeof field === "string") expect(error.field).toBe(field);
  else expect(error.field).toMatch(field);
  expect(error.rule?.source).toBe(REQUEST_RULES.get(rule)!.source);
  expect(error.rule?.stage).toBe(REQUEST_RULES.get(rule)!.stage);
  expect(error.message).toMatch(/is invalid at .*Fix that field and resubmit\.$/);
  return error;
}

const accepted = (request: unknown) =>
  expect(() => validateRequest(request, { maxModelLen: 64 })).not.toThrow();

describe("SamplingParams._verify_args / _verify_greedy_sampling / __post_init__", () => {
  it.each([
    ["n", { n: 0 }, "SamplingParams.n.min"],
    ["n", { n: 16385 }, "SamplingParams.n.max"],
    ["presencePenalty", { presencePenalty: 2.0001 }, "SamplingParams.presence_penalty.range"],
    ["presencePenalty", { presencePenalty: Number.NaN }, "SamplingParams.presence_penalty.range"],
    ["frequencyPenalty", { frequencyPenalty: -2.5 }, "SamplingParams.frequency_penalty.range"],
    ["repetitionPenalty", { repetitionPenalty: 0 }, "SamplingParams.repetition_penalty.positive"],
    [
      "repetitionPenalty",
      { repetitionPenalty: Number.POSITIVE_INFINITY },
      "SamplingParams.repetition_penalty.finite",
    ],
    ["temperature", { temperature: 2.0000001 }, "SamplingParams.temperature.max"],
    ["temperature", { temperature: -0.1 }, "SamplingParams.temperature.min"],
    ["temperature", { temperature: Number.NaN }, "SamplingParams.temperature.finite"],
    ["topP", { topP: 0 }, "SamplingParams.top_p.range"],
    ["topP", { topP: 1.01 }, "SamplingParams.top_p.range"],
    ["topK", { topK: -2 }, "SamplingParams.top_k.min"],
    ["minP", { minP: 1.5 }, "SamplingParams.min_p.range"],
    ["maxTokens", { maxTokens: 0 }, "SamplingParams.max_tokens.min"],
    ["minTokens", { minTokens: -1 }, "SamplingParams.min_tokens.min"],
    ["minTokens", { maxTokens: 4, minTokens: 5 }, "SamplingParams.min_tokens.max"],
    ["streamInterval", { streamInterval: 0 }, "SamplingParams.stream_interval.min"],
    ["logprobs", { logprobs: -2 }, "SamplingParams.logprobs.min"],
    ["promptLogprobs", { promptLogprobs: -2 }, "SamplingParams.prompt_logprobs.min"],
    ["stop[1]", { stop: ["a", ""] }, "SamplingParams.stop.empty"],
    ["stop", { stop: "" }, "SamplingParams.stop.empty"],
    ["detokenize", { stop: "x", detokenize: false }, "SamplingParams.stop.detokenize"],
    ["badWords[0]", { badWords: [""] }, "SamplingParams.bad_words.empty"],
    ["n", { n: 2, temperature: 0 }, "SamplingParams.greedy.n"],
    ["n", { n: 3, temperature: -0 }, "SamplingParams.greedy.n"],
    ["thinkingTokenBudget", { thinkingTokenBudget: -2 }, "SamplingParams.thinking_token_budget.min"],
  ])("%s: %j → %s", (field, sp, rule) => {
    const error = expectRefused(sampling(sp), rule, `samplingParams.${field}`);
    expect(error.requestId).toBe("r");
  });

  it("accepts every boundary vLLM accepts", () => {
    for (const sp of [
      { n: 1 },
      { n: 16384, temperature: 1 },
      { presencePenalty: -2, frequencyPenalty: 2 },
      { repetitionPenalty: 1e-300 },
      { temperature: 2 },
      { temperature: 0 },
      { temperature: new Float64(2) },
      // 0 < t < 0.01 is raised to 0.01 before the greedy check: not greedy, so n > 1 is fine.
      { temperature: 0.00001, n: 4 },
      { temperature: 1e-6, n: 2 },
      { topP: 1, topK: -1, minP: 0 },
      { topP: Number.MIN_VALUE, topK: 0, minP: 1 },
      { topK: 2 ** 40 },
      { temperature: 0, topP: 1, n: 1 },
      { maxTokens: 1, minTokens: 1 },
      { minTokens: 16, maxTokens: undefined },
      { logprobs: -1, promptLogprobs: 0 },
      { streamInterval: 1 },
      { stop: "x" },
      { stop: ["a", "b"], detokenize: true },
      { stop: [], detokenize: false },
      { badWords: ["a"] },
      { thinkingTokenBudget: -1 },
      { thinkingTokenBudget: 0 },
      { seed: -1 },
      { seed: 2n ** 63n },
      { logitBias: { "-5": Number.NaN, "7": 100 } },
      { logitBias: new Map([[3, 1.5]]) },
      { allowedTokenIds: [] },
      { stopTokenIds: [-1, 2 ** 40] },
      { allStopTokenIds: new Set([1, 2]) },
      {
        extraArgs: { any: [1, "x", null, new Map([[[1, 2], 3]])], raw: new MsgpackExt(3, new Uint8Array(2)) },
      },
      { outputKind: 2 },
      { repetitionDetection: { maxPatternSize: 0 } },
      { repetitionDetection: { maxPatternSize: 3, minPatternSize: 3, minCount: 2 } },
      { structuredOutputs: { jsonObject: false } },
      { structuredOutputs: { choice: [] } },
      { structuredOutputs: { json: { type: "object" }, backend: "xgrammar" } },
    ]) {
      accepted(sampling(sp));
    }
  });

  it("the default max_tokens (16) bounds min_tokens when maxTokens is not given", () => {
    const error = expectRefused(
      base({ samplingParams: { minTokens: 17 } }),
      "SamplingParams.min_tokens.max",
      "samplingParams.minTokens",
    );
    expect(error.detail).toMatch(/max_tokens=16 \(the default\)/);
    expect(error.value).toBe("17n");
  });
});

describe("msgspec's type rules", () => {
  it.each([
    ["samplingParams.n", { n: 2.5 }, "msgspec.int"],
    ["samplingParams.maxTokens", { maxTokens: new Float64(16) }, "msgspec.int"],
    ["samplingParams.topK", { topK: true }, "msgspec.int"],
    ["samplingParams.temperature", { temperature: "1" }, "msgspec.float"],
    ["samplingParams.temperature", { temperature: null }, "msgspec.float"],
    ["samplingParams.temperature", { temperature: 1n }, "client.float"],
    ["samplingParams.ignoreEos", { ignoreEos: 1 }, "msgspec.bool"],
    ["samplingParams.stop", { stop: 5 }, "msgspec.union"],
    ["samplingParams.stop[0]", { stop: [5] }, "msgspec.str"],
    ["samplingParams.stopTokenIds[1]", { stopTokenIds: [1, 2.5] }, "msgspec.int"],
    ["samplingParams.stopTokenIds[0]", { stopTokenIds: ["1"] }, "msgspec.int"],
    ["samplingParams.allStopTokenIds", { allStopTokenIds: null }, "msgspec.array"],
    ["samplingParams.logitBias[abc]", { logitBias: { abc: 1 } }, "msgspec.dict_key"],
    ["samplingParams.logitBias[1.5]", { logitBias: new Map([[1.5, 1]]) }, "msgspec.int"],
    ["samplingParams.outputKind", { outputKind: 3 }, "msgspec.enum"],
    [
      'samplingParams.extraArgs["x"]',
      { extraArgs: { x: new MsgpackExt(1, new Uint8Array(1)) } },
      "msgspec.ext",
    ],
    ['samplingParams.extraArgs["x"]{key}', { extraArgs: { x: new Map([[{}, 1]]) } }, "msgspec.hashable"],
    ['samplingParams.extraArgs["f"]', { extraArgs: { f: () => 1 } }, "client.any"],
    ["samplingParams.seed", { seed: 2 ** 60 }, "client.int.safe"],
    ["samplingParams.seed", { seed: 2n ** 64n }, "client.int.range"],
  ])("%s: %o → %s", (field, sp, rule) => {
    expectRefused(sampling(sp), rule, field);
  });

  it("a float where vLLM expects an int is named with msgspec's own words", () => {
    const error = expectRefused(sampling({ maxTokens: 1.5 }), "msgspec.int", "samplingParams.maxTokens");
    expect(error.detail).toBe("Expected `int`, got `float`");
    expect(error.value).toBe("1.5");
  });

  it.each([
    ["requestId", { requestId: 7 }, "msgspec.str"],
    ["promptTokenIds[1]", { promptTokenIds: [1, 2.5] }, "msgspec.int"],
    ["promptTokenIds", { promptTokenIds: "1 2" }, "msgspec.array"],
    ["arrivalTime", { arrivalTime: "now" }, "msgspec.float"],
    ["arrivalTime", { arrivalTime: true }, "msgspec.float"],
    ["cacheSalt", { cacheSalt: 1 }, "msgspec.str"],
    ["dataParallelRank", { dataParallelRank: 0.5 }, "msgspec.int"],
    ["priority", { priority: null }, "msgspec.int"],
    ["priority", { priority: 1.5 }, "msgspec.int"],
    ['traceHeaders["a"]', { traceHeaders: { a: 1 } }, "msgspec.str"],
    ["resumable", { resumable: "yes" }, "msgspec.bool"],
    ["promptIsTokenIds[0]", { promptIsTokenIds: [1] }, "msgspec.bool"],
    ["reasoningParserKwargs[1]", { reasoningParserKwargs: new Map([[1, 2]]) }, "msgspec.dict_key"],
  ])("EngineCoreRequest.%s: %o → %s", (field, extra, rule) => {
    expectRefused(base(extra), rule, field);
  });

  it("accepts what msgspec accepts at the request level", () => {
    accepted(base({ requestId: "" }));
    accepted(base({ promptTokenIds: [-1, 0, 2 ** 33, 2n ** 63n] }));
    accepted(base({ arrivalTime: -1 }));
    accepted(base({ arrivalTime: Number.NaN }));
    accepted(base({ dataParallelRank: -1, priority: -(2 ** 40), currentWave: 3 }));
    accepted(base({ traceHeaders: { a: "b" }, reasoningEnded: false, reasoningParserKwargs: { k: [1] } }));
  });
});

describe("StructuredOutputsParams / RepetitionDetectionParams / LoRARequest / PoolingParams __post_init__", () => {
  it.each([
    [{ json: "{}", regex: "a" }, "StructuredOutputsParams.kinds.multiple"],
    [{ choice: ["a"], jsonObject: true, grammar: "g" }, "StructuredOutputsParams.kinds.multiple"],
    [{}, "StructuredOutputsParams.kinds.none"],
    [{ disableAnyWhitespace: true }, "StructuredOutputsParams.kinds.none"],
  ])("structuredOutputs %o → %s", (so, rule) => {
    expectRefused(sampling({ structuredOutputs: so }), rule, "samplingParams.structuredOutputs");
  });

  it("structured outputs field types", () => {
    expectRefused(
      sampling({ structuredOutputs: { json: [1] } }),
      "msgspec.union",
      "samplingParams.structuredOutputs.json",
    );
    expectRefused(
      sampling({ structuredOutputs: { regex: 1 } }),
      "msgspec.str",
      "samplingParams.structuredOutputs.regex",
    );
    expectRefused(
      sampling({ structuredOutputs: { regex: "a", backendWasAuto: "no" } }),
      "msgspec.bool",
      "samplingParams.structuredOutputs.backendWasAuto",
    );
  });

  it.each([
    [{ maxPatternSize: -1 }, "RepetitionDetectionParams.sizes"],
    [{ maxPatternSize: 2, minPatternSize: 3, minCount: 2 }, "RepetitionDetectionParams.sizes"],
    [{ minPatternSize: -1 }, "RepetitionDetectionParams.sizes"],
    [{ maxPatternSize: 2, minCount: 1 }, "RepetitionDetectionParams.min_count"],
  ])("repetitionDetection %o → %s", (rd, rule) => {
    expectRefused(sampling({ repetitionDetection: rd }), rule, /^samplingParams\.repetitionDetection/);
  });

  it.each([
    [{ loraName: "a", loraIntId: 0, loraPath: "/p" }, "LoRARequest.lora_int_id.min", "loraRequest.loraIntId"],
    [{ loraName: "a", loraIntId: 1 }, "LoRARequest.lora_path.empty", "loraRequest.loraPath"],
    [{ loraName: "a", loraIntId: 1, loraPath: "" }, "LoRARequest.lora_path.empty", "loraRequest.loraPath"],
    [{ loraIntId: 1, loraPath: "/p" }, "msgspec.required", "loraRequest.loraName"],
    [{ loraName: "a", loraIntId: "1", loraPath: "/p" }, "msgspec.int", "loraRequest.loraIntId"],
    [
      { loraName: "a", loraIntId: 1, loraPath: "/p", loadInplace: 1 },
      "msgspec.bool",
      "loraRequest.loadInplace",
    ],
    [["a", 1, "/p"], "msgspec.array", "loraRequest"],
  ])("loraRequest %o → %s", (lora, rule, field) => {
    expectRefused(base({ loraRequest: lora }), rule, field);
  });

  it("accepts a valid LoRA request", () => {
    accepted(
      base({
        loraRequest: { loraName: "a", loraIntId: 1, loraPath: "/p", tensorizerConfigDict: new Map([[1, 2]]) },
      }),
    );
  });

  const pooling = (p: Record<string, unknown>) => base({ samplingParams: undefined, poolingParams: p });
  it.each([
    [{ task: "score" }, "msgspec.literal", "poolingParams.task"],
    [{ task: "generate" }, "msgspec.literal", "poolingParams.task"],
    [{ task: "embed", outputKind: 0 }, "PoolingParams.output_kind", "poolingParams.outputKind"],
    [{ task: "embed", outputKind: 1 }, "PoolingParams.output_kind", "poolingParams.outputKind"],
    [{ dimensions: 1.5 }, "msgspec.int", "poolingParams.dimensions"],
    [
      { lateInteractionParams: { mode: "cache_query" } },
      "msgspec.required",
      "poolingParams.lateInteractionParams.queryKey",
    ],
  ])("poolingParams %o → %s", (p, rule, field) => {
    expectRefused(pooling(p), rule, field);
  });

  it("accepts valid pooling params", () => {
    accepted(pooling({}));
    accepted(
      pooling({
        task: "embed&token_classify",
        outputKind: 2,
        lateInteractionParams: { mode: "m", queryKey: "k" },
      }),
    );
  });
});

describe("multimodal features and tensors (MsgpackDecoder.dec_hook)", () => {
  const tensor = (dtype: string, shape: number[], bytes: number) => ({
    dtype,
    shape,
    data: new Uint8Array(bytes),
  });
  const feature = (extra: Record<string, unknown> = {}) => ({
    data: { pixel_values: { data: tensor("float32", [2], 8), field: ["batched", { keep_on_cpu: false }] } },
    modality: "image",
    identifier: "id",
    mmPosition: { offset: 0, length: 2 },
    ...extra,
  });

  it("accepts a well-formed feature", () => {
    accepted(base({ mmFeatures: [feature()] }));
    accepted(
      base({
        mmFeatures: [
          feature({ data: null, mmPosition: { offset: 1, length: 1, isEmbed: tensor("bool", [1], 1) } }),
        ],
      }),
    );
    accepted(
      base({
        mmFeatures: [
          feature({
            data: {
              x: {
                data: [1, new Float64(2)],
                field: [
                  "flat",
                  {
                    slices: [
                      [0, 1],
                      [1, 2],
                    ],
                    dim: 0,
                  },
                ],
              },
            },
          }),
        ],
      }),
    );
    accepted(
      base({ mmFeatures: [feature({ data: { x: { data: null, field: ["shared", { batch_size: 2 }] } } })] }),
    );
  });

  it.each([
    [
      feature({ data: { x: { data: tensor("<f4", [2], 8), field: ["batched", {}] } } }),
      "tensor.dtype",
      /\.dtype$/,
    ],
    [
      feature({ data: { x: { data: tensor("float32", [3], 8), field: ["batched", {}] } } }),
      "tensor.size",
      /\.data\.data$/,
    ],
    [
      feature({ data: { x: { data: tensor("int64", [0], 8), field: ["batched", {}] } } }),
      "tensor.size",
      /\.data\.data$/,
    ],
    [feature({ data: { x: { data: "pixels", field: ["batched", {}] } } }), "mm.nested", /\.data$/],
    [feature({ data: { x: { data: null, field: ["flat_from_sizes", {}] } } }), "mm.field", /\.field\[0\]$/],
    [feature({ data: { x: { data: null, field: ["batched"] } } }), "mm.field", /\.field$/],
    [feature({ data: { x: { data: null, field: ["shared", {}] } } }), "mm.field.kwargs", /\.field\[1\]$/],
    [
      feature({ data: { x: { data: null, field: ["batched", { dim: 1 }] } } }),
      "mm.field.kwargs",
      /\.field\[1\]\.dim$/,
    ],
    [
      feature({ data: { x: { data: null, field: ["flat", { slices: [0, 1, 2, 3] }] } } }),
      "mm.slices",
      /slices$/,
    ],
    [feature({ data: { x: { data: null, field: ["flat", { slices: 3 }] } } }), "mm.slices", /slices$/],
    [feature({ modality: undefined }), "msgspec.required", /\.modality$/],
    [feature({ mmPosition: { offset: 0 } }), "msgspec.required", /\.mmPosition\.length$/],
    [feature({ mmPosition: { offset: 0.5, length: 1 } }), "msgspec.int", /\.mmPosition\.offset$/],
  ])("refuses %#", (f, rule, field) => {
    expectRefused(base({ mmFeatures: [f] }), rule, field);
  });
});

describe("the client's frontend role", () => {
  it.each([
    [{ promptTokenIds: [] }, "frontend.prompt.empty", "promptTokenIds"],
    [{ promptTokenIds: null }, "frontend.prompt.empty", "promptTokenIds"],
    [{ promptTokenIds: new Array(65).fill(1) }, "frontend.prompt.max_model_len", "promptTokenIds"],
    [{ samplingParams: undefined }, "frontend.params.one", "samplingParams"],
    [{ poolingParams: { task: "embed" } }, "frontend.params.one", "samplingParams"],
    [{ samplingParams: { maxTokens: null } }, "frontend.max_tokens.null", "samplingParams.maxTokens"],
    [
      { promptEmbeds: { dtype: "float32", shape: [1], data: new Float32Array(1) } },
      "client.prompt_embeds",
      "promptEmbeds",
    ],
  ])("%o → %s", (extra, rule, field) => {
    expectRefused(base(extra), rule, field);
  });

  it("a non-object request", () => {
    for (const bad of [null, undefined, "r", [1]]) expectRefused(bad, "client.request", "request");
  });

  // vllm/v1/engine/input_processor.py InputProcessor._validate_prompt_len, vLLM's wording.
  it("a generation prompt of exactly maxModelLen tokens is refused (no room for one output token)", () => {
    const error = expectRefused(
      base({ promptTokenIds: new Array(64).fill(1) }),
      "frontend.prompt.max_model_len.generate",
      "promptTokenIds",
    );
    expect(error.detail).toBe(
      "The decoder prompt (length 64) plus the number of requested output tokens (at least 1) is longer " +
        "than the maximum model length of 64. Make sure that `max_model_len` is no smaller than the number " +
        "of text tokens (prompt + requested output tokens).",
    );
    accepted(base({ promptTokenIds: new Array(63).fill(1) }));
  });

  it("a prompt longer than maxModelLen is refused with vLLM's wording", () => {
    const error = expectRefused(
      base({ promptTokenIds: new Array(65).fill(1) }),
      "frontend.prompt.max_model_len",
      "promptTokenIds",
    );
    expect(error.detail).toBe(
      "The decoder prompt (length 65) is longer than the maximum model length of 64. Make sure that " +
        "`max_model_len` is no smaller than the number of text tokens.",
    );
  });

  it("a pooling prompt of exactly maxModelLen tokens is accepted (the rule is for generation only)", () => {
    const pooling = (n: number) =>
      ({
        requestId: "p",
        promptTokenIds: new Array(n).fill(1),
        poolingParams: { task: "embed" },
      }) as CallRequest;
    accepted(pooling(64));
    expectRefused(pooling(65), "frontend.prompt.max_model_len", "promptTokenIds");
  });
});

describe("the rule table", () => {
  it("every rule names a source and applies at the pinned revision", () => {
    const active = rulesFor();
    for (const rule of REQUEST_RULES.values()) {
      expect(rule.source.length).toBeGreaterThan(0);
      expect(active.has(rule.id)).toBe(true);
    }
    expect(REQUEST_RULES.get("SamplingParams.temperature.max")?.source).toBe(
      "vllm/sampling_params.py SamplingParams._verify_args",
    );
  });
});

describe("call() against the mock engine: requests that would kill the engine's input thread", () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  it("are refused with InvalidRequestError naming field, value and rule; the engine stays responsive", async () => {
    harness = await connectToMockEngine();
    const { client, engine } = harness;
    const cases: [string, Record<string, unknown>, string, string][] = [
      [
        "temperature",
        { samplingParams: { maxTokens: 4, temperature: 2.5 } },
        "SamplingParams.temperature.max",
        "samplingParams.temperature",
      ],
      [
        "greedy n",
        { samplingParams: { maxTokens: 4, temperature: 0, n: 2 } },
        "SamplingParams.greedy.n",
        "samplingParams.n",
      ],
      [
        "empty stop",
        { samplingParams: { maxTokens: 4, stop: ["end", ""] } },
        "SamplingParams.stop.empty",
        "samplingParams.stop[1]",
      ],
      [
        "default max",
        { samplingParams: { minTokens: 20 } },
        "SamplingParams.min_tokens.max",
        "samplingParams.minTokens",
      ],
      [
        "two kinds",
        { samplingParams: { maxTokens: 4, structuredOutputs: { regex: "a+", choice: ["a"] } } },
        "StructuredOutputsParams.kinds.multiple",
        "samplingParams.structuredOutputs",
      ],
      [
        "lora id",
        { loraRequest: { loraName: "a", loraIntId: 0, loraPath: "/p" } },
        "LoRARequest.lora_int_id.min",
        "loraRequest.loraIntId",
      ],
      [
        "lora path",
        { loraRequest: { loraName: "a", loraIntId: 1 } },
        "LoRARequest.lora_path.empty",
        "loraRequest.loraPath",
      ],
      ["float int", { samplingParams: { maxTokens: 4, topK: 2.5 } }, "msgspec.int", "samplingParams.topK"],
    ];
    for (const [what, extra, rule, field] of cases) {
      const error = await client.call({ ...chatRequest(what, 4), ...extra } as CallRequest).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(InvalidRequestError);
      const invalid = error as InvalidRequestError;
      expect(invalid.rule?.id, what).toBe(rule);
      expect(invalid.field, what).toBe(field);
      expect(invalid.value, what).toBeDefined();
      expect(invalid.message, what).toContain(invalid.rule!.source);
    }
    // None reached the engine, which still serves.
    const { tokens } = await collect(await client.call(chatRequest("still-serving", 3)));
    expect(tokens).toHaveLength(3);
    expect(engine.events.filter((e) => e.event === "add").map((e) => e.requestId)).toEqual(["still-serving"]);
    expect(engine.events.some((e) => e.event === "fault")).toBe(false);
  });

  it("values vLLM accepts are sent (checks the client used to make that vLLM does not)", async () => {
    harness = await connectToMockEngine();
    const { client, engine } = harness;
    const accepted: CallRequest[] = [
      { ...chatRequest("neg-stop-id", 2), samplingParams: { maxTokens: 2, stopTokenIds: [-1] } },
      { ...chatRequest("big-id", 2), promptTokenIds: [1, 2 ** 33] },
      { ...chatRequest("neg-bias", 2), samplingParams: { maxTokens: 2, logitBias: { "-3": 1 } } },
      { ...chatRequest("empty-allowed", 2), samplingParams: { maxTokens: 2, allowedTokenIds: [] } },
      { ...chatRequest("old-arrival", 2), arrivalTime: -1 },
      { ...chatRequest("", 2) },
    ];
    for (const request of accepted) {
      const { tokens } = await collect(await client.call(request));
      expect(tokens, request.requestId).toHaveLength(2);
    }
    expect(engine.events.filter((e) => e.event === "add").map((e) => e.requestId)).toEqual(
      accepted.map((r) => r.requestId),
    );
  });
});
