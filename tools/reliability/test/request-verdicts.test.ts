// Property: for requests across every field's valid and invalid ranges, the client's verdict
// (validateRequest throws InvalidRequestError or not) equals the engine's (the mock engine, whose
// independent model of vLLM's ADD decode accepts or rejects it), over real sockets with the mock in a
// child process. Each request is sent as a raw encoding of the wire request the client would build,
// bypassing the client's validation, so the engine judges every case; an accepted one is sent a second
// time as the client's own encoding, which the engine must accept too.
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CallRequest, InvalidRequestError, validateRequest } from "@vllm-engine-core/client";
import { type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import {
  type EngineCoreRequest,
  encodeAbortRequest,
  encodeAddRequest,
  encodeValue,
  engineIdentity,
  Float64,
  MsgpackExt,
  RequestType,
} from "@vllm-engine-core/protocol";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RawFrontend } from "./fixtures/raw-frontend.js";

// ---- the engine side: one mock process hosting several engines, judged over raw sockets ------------

const ENGINES = 32;

class Judge {
  #process: MockEngineProcess | undefined;
  #frontend: RawFrontend | undefined;
  #paths: string[] = [];
  /** Engines still alive (an accepted pooling request is fatal: the mock model supports no pooling task). */
  #live: number[] = [];
  restarts = 0;

  async start(): Promise<void> {
    this.#paths = ["in", "out"].map((t) =>
      join(tmpdir(), `vec-verdict-${t}-${randomUUID().slice(0, 8)}.sock`),
    );
    const frontend = new RawFrontend();
    this.#frontend = frontend;
    await frontend.bind(`ipc://${this.#paths[0]}`, `ipc://${this.#paths[1]}`);
    const engineIndices = Array.from({ length: ENGINES }, (_, i) => i);
    this.#process = await startMockEngine({
      mode: "bootstrapped",
      inputAddress: `ipc://${this.#paths[0]}`,
      outputAddress: `ipc://${this.#paths[1]}`,
      engineIndices,
      // The verdict is the decode's: an accepted request is aborted right after its `add` event and must
      // never reach a step, where a model-level failure (an out-of-vocabulary prompt id with prompt
      // logprobs: vLLM's gather raises) would kill the engine before that ABORT arrives — a race CI hit
      // once. So the engines step once a minute, i.e. never within a verdict.
      stepMs: 60_000,
      surviveBadRequests: true,
    });
    const deadline = Date.now() + 20_000;
    while (frontend.registered.size < ENGINES) {
      if (Date.now() > deadline) throw new Error("mock engines did not register");
      await new Promise((r) => setTimeout(r, 10));
    }
    this.#live = engineIndices;
  }

  async stop(): Promise<void> {
    await this.#process?.stop();
    this.#frontend?.close();
    for (const path of this.#paths) rmSync(path, { force: true });
  }

  /** Sends `frames` as an ADD for `requestId` and returns the engine's verdict. */
  async verdict(
    requestId: string,
    frames: Uint8Array[],
    fatalIfAccepted: boolean,
  ): Promise<{ accepted: boolean; error?: string }> {
    if (this.#live.length === 0) {
      await this.stop();
      await this.start();
      this.restarts++;
    }
    const engine = this.#live[0]!;
    await this.#frontend!.send(engineIdentity(engine), frames);
    const event = await this.#process!.waitForEvent(
      (e) => e.requestId === requestId && (e.event === "add" || e.event === "rejected"),
      10_000,
    );
    if (event.event === "rejected") return { accepted: false, error: String(event.error) };
    if (fatalIfAccepted) {
      await this.#process!.waitForEvent(
        (e) => e.event === "fault" && e.kind === "engine-dead" && e.engineIndex === engine,
      );
      this.#live.shift();
    } else {
      await this.#frontend!.send(engineIdentity(engine), encodeAbortRequest([requestId]));
    }
    return { accepted: true };
  }
}

// ---- the client side ---------------------------------------------------------------------------------

function clientVerdict(request: CallRequest): { accepted: boolean; rule?: string; message?: string } {
  try {
    validateRequest(request);
    return { accepted: true };
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error;
    const rule = error.rule?.id ?? "none";
    // The generators stay within what the wire can carry and within the frontend's own rules, so every
    // refusal must be one of the engine's decode-time rules.
    expect(error.rule?.stage, `${rule}: ${error.message}`).toBe("decode");
    return { accepted: false, rule, message: error.message };
  }
}

/** The wire request the client builds (defaults filled in), as buildRequest does. */
function wireRequest(request: CallRequest): EngineCoreRequest {
  return {
    ...request,
    mmFeatures: request.mmFeatures ?? null,
    samplingParams: request.samplingParams ?? null,
    poolingParams: request.poolingParams ?? null,
    arrivalTime: request.arrivalTime ?? 1_700_000_000.5,
    loraRequest: request.loraRequest ?? null,
    cacheSalt: request.cacheSalt ?? null,
    dataParallelRank: request.dataParallelRank ?? null,
    clientIndex: 0,
  };
}

// ---- raw encoding: the same wire request, written without any check ----------------------------------

const PRIVATE = new Set(["eosTokenId", "allStopTokenIds", "badWordsTokenIds", "backend", "backendWasAuto"]);
const snake = (key: string) =>
  (PRIVATE.has(key) ? "_" : "") + key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && [Object.prototype, null].includes(Object.getPrototypeOf(v));

function mapStruct(v: unknown, nested: Record<string, (x: unknown) => unknown> = {}): unknown {
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined) continue;
    out[snake(k)] = nested[k] ? nested[k](x) : x;
  }
  return out;
}

function arrayStruct(
  v: unknown,
  fields: [string, unknown][],
  nested: Record<string, (x: unknown) => unknown> = {},
): unknown {
  if (!isObject(v)) return v;
  return fields.map(([k, dflt]) => (v[k] === undefined ? dflt : nested[k] ? nested[k](v[k]) : v[k]));
}

function tensor(v: unknown): unknown {
  if (!isObject(v) || !ArrayBuffer.isView(v.data)) return v;
  const data = v.data as ArrayBufferView;
  return [v.dtype, v.shape, new MsgpackExt(3, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))];
}

function nestedTensors(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(nestedTensors);
  return isObject(v) ? tensor(v) : v;
}

function logitBias(v: unknown): unknown {
  if (!isObject(v)) return v;
  return new Map(Object.entries(v).map(([k, x]) => [/^-?\d+$/.test(k) ? Number(k) : k, x]));
}

function rawEncode(request: CallRequest): Uint8Array[] {
  const r = wireRequest(request) as unknown as Record<string, unknown>;
  const sampling = (v: unknown) =>
    mapStruct(v, {
      structuredOutputs: (x) => mapStruct(x),
      repetitionDetection: (x) => mapStruct(x),
      logitBias,
    });
  const pooling = (v: unknown) =>
    arrayStruct(
      v,
      [
        ["useActivation", null],
        ["dimensions", null],
        ["stepTagId", null],
        ["returnedTokenIds", null],
        ["task", null],
        ["requiresTokenIds", false],
        ["skipReadingPrefixCache", null],
        ["lateInteractionParams", null],
        ["extraKwargs", null],
        ["outputKind", 2],
      ],
      {
        lateInteractionParams: (x) =>
          arrayStruct(x, [
            ["mode", null],
            ["queryKey", null],
            ["queryUses", null],
          ]),
      },
    );
  const lora = (v: unknown) =>
    arrayStruct(v, [
      ["loraName", null],
      ["loraIntId", null],
      ["loraPath", ""],
      ["baseModelName", null],
      ["tensorizerConfigDict", null],
      ["loadInplace", false],
      ["is3dLoraWeight", false],
    ]);
  const features = (v: unknown) =>
    Array.isArray(v)
      ? v.map((f) =>
          mapStruct(
            { data: null, ...(f as object) },
            {
              data: (d) =>
                isObject(d)
                  ? Object.fromEntries(
                      Object.entries(d).map(([k, e]) => [
                        k,
                        mapStruct({ data: null, ...(e as object) }, { data: nestedTensors }),
                      ]),
                    )
                  : d,
              mmPosition: (p) => mapStruct(p, { isEmbed: tensor }),
            },
          ),
        )
      : v;
  const none = (f: (x: unknown) => unknown) => (x: unknown) => (x === null ? null : f(x));
  const wire = arrayStruct(
    r,
    [
      ["requestId", null],
      ["promptTokenIds", null],
      ["mmFeatures", null],
      ["samplingParams", null],
      ["poolingParams", null],
      ["arrivalTime", null],
      ["loraRequest", null],
      ["cacheSalt", null],
      ["dataParallelRank", null],
      ["promptEmbeds", null],
      ["promptIsTokenIds", null],
      ["clientIndex", 0],
      ["currentWave", 0],
      ["priority", 0],
      ["traceHeaders", null],
      ["resumable", false],
      ["externalReqId", null],
      ["reasoningEnded", null],
      ["reasoningParserKwargs", null],
      ["abortImmediately", false],
    ],
    {
      samplingParams: none(sampling),
      poolingParams: none(pooling),
      loraRequest: none(lora),
      mmFeatures: none(features),
      arrivalTime: (x) => (typeof x === "number" ? new Float64(x) : x),
    },
  );
  return [Uint8Array.of(RequestType.ADD), encodeValue(wire)];
}

// ---- generators ------------------------------------------------------------------------------------
// Each struct is generated from per-field valid and invalid values: a case takes valid values for any
// subset of the fields (so cross-field rules — n > 1 with greedy, min_tokens above the default
// max_tokens, stop without detokenize, several structured-output kinds — come up on their own) and
// breaks up to a few of them with invalid ones (wrong wire types and out-of-range values).

type Spec = Record<string, { valid: fc.Arbitrary<unknown>; invalid: fc.Arbitrary<unknown> }>;
const pick = <T>(...values: T[]) => fc.constantFrom(...values);
const f64 = (x: number) => new Float64(x);
const field = (valid: unknown[], invalid: unknown[]) => ({
  valid: pick(...valid),
  invalid: pick(...invalid),
});

function struct(spec: Spec, options: { minBroken?: number; maxBroken?: number; required?: string[] } = {}) {
  const keys = Object.keys(spec);
  const base = fc.record(Object.fromEntries(keys.map((k) => [k, spec[k]!.valid])), {
    requiredKeys: options.required ?? [],
  });
  const broken = fc
    .uniqueArray(pick(...keys), { minLength: options.minBroken ?? 0, maxLength: options.maxBroken ?? 2 })
    .chain((ks) =>
      fc
        .tuple(...ks.map((k) => spec[k]!.invalid))
        .map((vs) => Object.fromEntries(ks.map((k, i) => [k, vs[i]]))),
    );
  return fc.tuple(base, broken).map(([b, x]) => ({ ...b, ...x }) as Record<string, unknown>);
}
/** A nested struct field: valid = well-formed, invalid = one or two fields broken, or not a struct at all. */
function nested(spec: Spec, notStruct: unknown[], required: string[] = []) {
  return {
    valid: fc.oneof(fc.constant(null), struct(spec, { maxBroken: 0, required })),
    invalid: fc.oneof(struct(spec, { minBroken: 1, maxBroken: 2, required }), pick(...notStruct)),
  };
}

const BOOL = field([true, false], [1, null, "true"]);

const structuredOutputsSpec: Spec = {
  json: field(["{}", { type: "object" }, null], [[1], 5]),
  regex: field(["a+", null], [1]),
  choice: field([["a", "b"], [], null], [[1], "a"]),
  grammar: field(["root ::= 'a'", "", null], [2]),
  jsonObject: field([true, false, null], ["yes", 1]),
  structuralTag: field(["tag", null], [{}]),
  disableAnyWhitespace: BOOL,
  disableAdditionalProperties: BOOL,
  whitespacePattern: field([" ", null], [3]),
  backend: field(["xgrammar", "guidance", null], [7]),
  backendWasAuto: BOOL,
};

const repetitionSpec: Spec = {
  maxPatternSize: field([0, 2, 4], [-1, 1.5, "2"]),
  minPatternSize: field([0, 1, 3, 5], [-1, f64(1)]),
  minCount: field([0, 1, 2, 3], [true, 2.5]),
};

const samplingSpec: Spec = {
  n: field([1, 2, 4, 16384], [0, -1, 16385, 1.5, "2", null, f64(2)]),
  temperature: field(
    [0, -0, 1e-6, 0.005, 0.01, 0.7, 1, 2, f64(1), 2],
    [2.0000001, 2.5, 3, -0.1, Number.NaN, Number.POSITIVE_INFINITY, "1", null],
  ),
  topP: field([1e-9, 0.5, 1], [0, 1.0001, -1, Number.NaN, null]),
  topK: field([-1, 0, 1, 50], [-2, 1.5, true]),
  minP: field([0, 0.5, 1], [-0.1, 1.1, Number.NaN]),
  presencePenalty: field([-2, 0, 2, f64(0)], [-2.1, 2.1, Number.NaN]),
  frequencyPenalty: field([-2, 0.5, 2], [-2.5, 2.01, Number.NEGATIVE_INFINITY]),
  repetitionPenalty: field([1e-9, 1, 3], [0, -1, Number.POSITIVE_INFINITY, Number.NaN]),
  seed: field([-1, 0, 2 ** 31, 2n ** 63n, null], [1.5, "7"]),
  maxTokens: field([1, 4, 16, 40], [0, -1, 1.5, f64(16)]),
  minTokens: field([0, 1, 4, 16, 17, 41], [-1, 1.5, null]),
  stop: field([null, "x", [], ["a"], ["a", "b"]], ["", ["a", ""], [""], [1], 5]),
  detokenize: BOOL,
  stopTokenIds: field([null, [], [1, 2], [-1, 2 ** 40]], [[1.5], ["1"], 3]),
  ignoreEos: BOOL,
  logprobs: field([-1, 0, 5, null], [-2, 1.5]),
  promptLogprobs: field([-1, 0, 3, null], [-2, "1"]),
  logprobTokenIds: field([null, [1, 2]], [[1.5]]),
  streamInterval: field([null, 1, 5], [0, -1]),
  outputKind: field([0, 1, 2], [3, -1, "DELTA"]),
  eosTokenId: field([null, 2], [1.5]),
  allStopTokenIds: field([[], [1, 2], new Set([3])], [null, [1.5]]),
  thinkingTokenBudget: field([-1, 0, 10, null], [-2, 1.5]),
  badWords: field([null, [], ["x"]], [[""], [1]]),
  badWordsTokenIds: field([null, [[1]]], [[[1.5]], [1]]),
  logitBias: field(
    [null, { "1": 0.5 }, { "-1": 2 }, new Map([[1, 2]]), { "1": Number.NaN }],
    [{ a: 1 }, { "1": "x" }],
  ),
  allowedTokenIds: field([null, [], [1]], [[1.5]]),
  extraArgs: field(
    [null, { a: 1 }, { x: new MsgpackExt(3, Uint8Array.of(1)) }, { m: new Map([[[1, 2], 1]]) }],
    [{ x: new MsgpackExt(1, Uint8Array.of(1)) }, { m: new Map([[new Map(), 1]]) }, "args"],
  ),
  routedExpertsPromptStart: field([0, 5, -1], [1.5]),
  skipReadingPrefixCache: field([null, true], [1]),
  outputTextBufferLength: field([0, 3], [1.5]),
  flatLogprobs: BOOL,
  skipClone: BOOL,
  structuredOutputs: nested(structuredOutputsSpec, ["json", 1]),
  repetitionDetection: nested(repetitionSpec, [[2, 1, 2]]),
};

const loraSpec: Spec = {
  loraName: field(["a", ""], [1, null]),
  loraIntId: field([1, 7], [0, -1, 1.5]),
  loraPath: field(["/adapters/a"], ["", 1]),
  baseModelName: field([null, "base"], [2]),
  tensorizerConfigDict: field([null, { a: 1 }, new Map([[1, 2]])], ["dict"]),
  loadInplace: BOOL,
  is3dLoraWeight: BOOL,
};

const smallTensor = fc.record({
  dtype: pick("float32", "int64", "bool", "bfloat16", "float", "<f4", "float32"),
  shape: pick([2], [1, 2], [0], []),
  data: pick(4, 8, 16, 0).map((n) => new Uint8Array(n)),
});

const elemSpec: Spec = {
  data: {
    valid: fc.oneof(fc.constant(null), smallTensor, pick<unknown>(1, [1, 2], f64(0.5))),
    invalid: pick("px"),
  },
  field: field(
    [
      ["batched", { keep_on_cpu: false }],
      ["batched", {}],
      [
        "flat",
        {
          slices: [
            [0, 1],
            [1, 2],
          ],
          dim: 0,
        },
      ],
      ["flat", { slices: [0, 2] }],
      ["shared", { batch_size: 2 }],
    ],
    [
      ["batched", { dim: 0 }],
      ["flat", { slices: [0, 1, 2, 3] }],
      ["flat", {}],
      ["shared", {}],
      ["flat_from_sizes", {}],
      ["batched"],
    ],
  ),
};
const positionSpec: Spec = {
  offset: field([0, 2], [1.5, null]),
  length: field([1, 2], ["2"]),
  isEmbed: { valid: fc.oneof(fc.constant(null), smallTensor), invalid: pick("mask") },
};
const featureSpec: Spec = {
  data: {
    valid: fc.oneof(
      fc.constant(null),
      struct(elemSpec, { maxBroken: 0, required: ["field"] }).map((e) => ({ pixel_values: e })),
    ),
    invalid: fc.oneof(
      struct(elemSpec, { minBroken: 1, maxBroken: 1, required: ["field"] }).map((e) => ({ pixel_values: e })),
    ),
  },
  modality: field(["image"], [3]),
  identifier: field(["img-1"], [null]),
  mmPosition: {
    valid: struct(positionSpec, { maxBroken: 0, required: ["offset", "length"] }),
    invalid: struct(positionSpec, { minBroken: 1, maxBroken: 1, required: ["offset", "length"] }),
  },
  mmHash: field([null, "h"], [1]),
};
const features = (broken: boolean) =>
  fc.array(
    struct(featureSpec, {
      minBroken: broken ? 1 : 0,
      maxBroken: broken ? 1 : 0,
      required: ["modality", "identifier", "mmPosition"],
    }),
    { minLength: 1, maxLength: 2 },
  );

const requestSpec: Spec = {
  samplingParams: {
    valid: struct(samplingSpec, { maxBroken: 0 }),
    invalid: fc.oneof(struct(samplingSpec, { minBroken: 1, maxBroken: 2 }), pick<unknown>("greedy", [1])),
  },
  promptTokenIds: field([[1, 2, 3], [5], [-1, 2 ** 40]], [[1, 2.5], ["1"], [f64(1)]]),
  loraRequest: nested(loraSpec, ["a"], ["loraName", "loraIntId"]),
  mmFeatures: {
    valid: fc.oneof(fc.constant(null), features(false)),
    invalid: fc.oneof(features(true), pick("image")),
  },
  cacheSalt: field([null, "salt"], [1]),
  dataParallelRank: field([null, 0, -1], [1.5]),
  priority: field([0, -5, 2 ** 40], [1.5, null]),
  currentWave: field([0, 1], [1.5]),
  arrivalTime: field([1_700_000_000.25, 0, -1, Number.NaN, 17], ["now", null]),
  traceHeaders: field([null, { traceparent: "00-1" }], [{ a: 1 }]),
  resumable: BOOL,
  externalReqId: field([null, "ext"], [1]),
  reasoningEnded: field([null, true], [1]),
  reasoningParserKwargs: field([null, { k: [1] }], [new Map([[1, 2]])]),
  promptIsTokenIds: field([null, [true, false]], [[1]]),
  abortImmediately: BOOL,
};

const generationRequest = struct(requestSpec, { required: ["samplingParams", "promptTokenIds"] }).map(
  (r) => ({ ...r, requestId: "" }) as CallRequest,
);

const poolingSpec: Spec = {
  useActivation: field([null, true], [1]),
  dimensions: field([null, 8], [1.5]),
  stepTagId: field([null, 3], ["3"]),
  returnedTokenIds: field([null, [1]], [[1.5]]),
  task: field(
    [null, "embed", "classify", "token_embed", "token_classify", "plugin", "embed&token_classify"],
    ["score", "encode", "generate", 1],
  ),
  requiresTokenIds: BOOL,
  skipReadingPrefixCache: field([null, false], [0]),
  lateInteractionParams: field(
    [null, { mode: "cache_query", queryKey: "q" }, { mode: "m", queryKey: "q", queryUses: 2 }],
    [{ mode: "score_doc" }, { mode: 1, queryKey: "q" }],
  ),
  extraKwargs: field([null, { a: 1 }], [new Map([[1, 1]])]),
  outputKind: field([2], [0, 1, 3]),
};

const poolingRequest = struct(poolingSpec, { maxBroken: 1 }).map(
  (poolingParams) => ({ requestId: "", promptTokenIds: [1, 2, 3], poolingParams }) as CallRequest,
);

// ---- the property ------------------------------------------------------------------------------------

const judge = new Judge();
beforeAll(() => judge.start(), 60_000);
afterAll(() => judge.stop());

let next = 0;
const stats = { cases: 0, accepted: 0, rules: new Map<string, number>() };

async function sameVerdict(request: CallRequest): Promise<void> {
  const requestId = `case-${next++}`;
  const r = { ...request, requestId } as CallRequest;
  const client = clientVerdict(r);
  const fatal = r.poolingParams != null;
  const engine = await judge.verdict(requestId, rawEncode(r), fatal);
  const show = () =>
    JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? `${v}n` : v instanceof Map ? [...v] : v));
  expect(
    engine.accepted,
    `client ${client.accepted ? "accepts" : `refuses (${client.message})`} but the engine ${engine.accepted ? "accepts" : `rejects (${engine.error})`}: ${show()}`,
  ).toBe(client.accepted);
  stats.cases++;
  if (client.accepted) {
    stats.accepted++;
    // What the client really sends for it must be accepted as well.
    const realId = `${requestId}-real`;
    const real = await judge.verdict(
      realId,
      encodeAddRequest(wireRequest({ ...r, requestId: realId } as CallRequest)),
      fatal,
    );
    expect(real.accepted, `the client's own encoding was rejected: ${real.error}`).toBe(true);
  } else {
    stats.rules.set(client.rule!, (stats.rules.get(client.rule!) ?? 0) + 1);
  }
}

describe("client and engine agree on every request", () => {
  it("generation requests across every field's valid and invalid ranges", async () => {
    await fc.assert(fc.asyncProperty(generationRequest, sameVerdict), { numRuns: 1500 });
    expect(stats.accepted).toBeGreaterThan(20);
    expect(stats.cases - stats.accepted).toBeGreaterThan(100);
  }, 120_000);

  it("pooling requests (an accepted one is fatal to a mock engine: its model supports no pooling task)", async () => {
    await fc.assert(fc.asyncProperty(poolingRequest, sameVerdict), { numRuns: 120 });
    expect(judge.restarts).toBeLessThan(10);
  }, 120_000);

  it("the issue's defects, and a pooling output_kind, are refused by both", async () => {
    const generation = (extra: Record<string, unknown>) =>
      ({ requestId: "", promptTokenIds: [1], samplingParams: { maxTokens: 4 }, ...extra }) as CallRequest;
    const cases: CallRequest[] = [
      ...[
        { temperature: 2.5 },
        { n: 2, temperature: 0 },
        { stop: [""] },
        { structuredOutputs: { regex: "a", choice: ["a"] } },
      ].map((sp) => generation({ samplingParams: { maxTokens: 4, ...sp } })),
      generation({ loraRequest: { loraName: "a", loraIntId: 0, loraPath: "/p" } }),
      generation({ loraRequest: { loraName: "a", loraIntId: 1 } }),
      { requestId: "", promptTokenIds: [1], poolingParams: { task: "embed", outputKind: 1 } } as CallRequest,
    ];
    const before = stats.cases - stats.accepted;
    for (const request of cases) await sameVerdict(request);
    expect(stats.cases - stats.accepted - before).toBe(cases.length);
  });

  it("the properties exercised every family of decode-time rules", () => {
    expect(stats.cases).toBeGreaterThanOrEqual(1500 + 120);
    expect(stats.accepted).toBeGreaterThan(100);
    const seen = [...stats.rules.keys()];
    for (const family of [
      "msgspec.",
      "SamplingParams.",
      "StructuredOutputsParams.",
      "RepetitionDetectionParams.",
      "LoRARequest.",
      "PoolingParams.",
      "tensor.",
      "mm.",
    ]) {
      expect(
        seen.some((id) => id.startsWith(family)),
        `${family} in ${seen.join(", ")}`,
      ).toBe(true);
    }
  });
});
