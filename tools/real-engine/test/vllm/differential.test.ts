// Differential test: the same corpus of requests and utility calls goes to vLLM's real engine core (with
// the model-free executor) and to the mock engine (tools/mock-engine, `--vllm-version main`, the pin),
// each behind our EngineCoreClient, both in scripted-token mode (`extra_args.scripted_token_ids`). What the
// client sees must be the same, after differential-compare.ts normalized what may legitimately differ
// (clocks, made-up logprob values, timing-dependent stats values).
//
// Where the two differ because of the model-free executor rather than vLLM's engine (e.g. it has no
// save_sharded_state), the scenario says so in `knownDifference`; both sides are still recorded and asserted,
// and tools/mock-engine/README.md ("Measured against vLLM's engine") lists them.
//
// One real engine (start-up 12-20 s here), one client on it, the whole corpus on that connection; the
// mock (under 1 s to start) runs the same corpus at the same time on its own client.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type CallRequest,
  EngineCoreClient,
  type EngineCoreOutput,
  type SchedulerStats,
} from "@vllm-engine-core/client";
import { type MockEngineProcess, startMockEngine } from "@vllm-engine-core/mock-engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectToRealEngine,
  freePort,
  modelDirs,
  type RealEngine,
  startRealEngine,
} from "../../src/index.ts";
import {
  diff,
  errorObservation,
  type Observation,
  outputShape,
  plain,
  type RequestObservation,
  statsInsanity,
  statsSignature,
  type UtilityObservation,
} from "./differential-compare.ts";
import { kit, title } from "./tier.ts";

// Both engines play a model of the mock's vocabulary (32,000 ids, MOCK_VOCAB_SIZE): the real engine gets
// the tiny Qwen3 config with vocab_size 32000, so "-1 = whole vocabulary" logprobs and the executor's
// deterministic ids (drawn from [1000, vocab)) mean the same on both sides.
const VOCAB = 32_000;
/** The model's EOS (config.json eos_token_id), which a script ending "eos" emits when the request has none. */
const CONFIG_EOS = 2;
/** The request-level EOS (`SamplingParams._eos_token_id`, which vLLM's frontend fills from the tokenizer). */
const EOS = 7;
const MAX_MODEL_LEN = 256;
const STEP_MS = 10;

type Scenario =
  | {
      readonly name: string;
      readonly kind: "request";
      readonly request: Omit<CallRequest, "requestId">;
      /** Abort: "before-first" right after the call; a number after that many outputs. */
      readonly abort?: "before-first" | number;
      readonly knownDifference?: string;
    }
  | {
      readonly name: string;
      readonly kind: "utility";
      readonly method: string;
      readonly args: readonly unknown[];
      readonly knownDifference?: string;
    }
  | {
      /** Several calls interleaved; `run` returns what is compared. */
      readonly name: string;
      readonly kind: "sequence";
      readonly run: (client: EngineCoreClient, id: string) => Promise<unknown>;
      readonly knownDifference?: string;
    };

let promptBase = 1_000;
/** A prompt no other scenario shares (no prefix-cache hits between scenarios). */
function prompt(length = 6): number[] {
  const start = promptBase;
  promptBase += 100;
  return Array.from({ length }, (_, i) => start + i);
}

function scripted(
  ids: readonly number[],
  sampling: CallRequest["samplingParams"] = {},
  extra: Record<string, unknown> = {},
): Omit<CallRequest, "requestId"> {
  return {
    promptTokenIds: prompt(),
    samplingParams: { maxTokens: 8, ...sampling, extraArgs: { scripted_token_ids: [...ids], ...extra } },
  };
}

const req = (
  name: string,
  request: Omit<CallRequest, "requestId">,
  more: { abort?: "before-first" | number; knownDifference?: string } = {},
): Scenario => ({ name, kind: "request", request, ...more });
const util = (
  name: string,
  method: string,
  args: readonly unknown[],
  knownDifference?: string,
): Scenario => ({
  name,
  kind: "utility",
  method,
  args,
  ...(knownDifference ? { knownDifference } : {}),
});

const SCRIPT = [11, 22, 33, 44, 55];
const SHARED_PROMPT = prompt(40);
/** A length no other prompt has: whether the engine admitted the request before the abort is timing. */
const ABORTED_PROMPT_LENGTH = 7;
const corpus: Scenario[] = [
  // Scripts and what follows them.
  req("script, then LENGTH", scripted(SCRIPT, { maxTokens: 5 })),
  req("script shorter than max_tokens, scripted_end continue", scripted([11, 22], { maxTokens: 6 })),
  req(
    "script, scripted_end eos, request EOS",
    scripted([11, 22], { maxTokens: 6, eosTokenId: EOS }, { scripted_end: "eos" }),
  ),
  req(
    "script, scripted_end eos, no request EOS (the model's)",
    scripted([11, 22], { maxTokens: 5 }, { scripted_end: "eos" }),
  ),
  // Stop rules.
  req("stop token id", scripted([11, 22, 33, 44], { stopTokenIds: [33] })),
  req("EOS in the script", scripted([11, EOS, 22], { eosTokenId: EOS })),
  req(
    "EOS and a stop token: EOS has no stop_reason",
    scripted([11, 33, EOS], { eosTokenId: EOS, stopTokenIds: [EOS, 33] }),
  ),
  req("ignore_eos", scripted([11, EOS, 22], { ignoreEos: true, maxTokens: 4 })),
  req(
    "min_tokens with a scripted EOS before it",
    scripted([11, EOS, 22, EOS], { eosTokenId: EOS, minTokens: 3 }),
  ),
  req(
    "min_tokens with a scripted stop token before it",
    scripted([11, 33, 22, 33], { stopTokenIds: [33], minTokens: 3 }),
  ),
  req("max_tokens 1", scripted(SCRIPT, { maxTokens: 1 })),
  req("max_model_len reached", {
    promptTokenIds: prompt(MAX_MODEL_LEN - 3),
    samplingParams: { maxTokens: 10, extraArgs: { scripted_token_ids: SCRIPT } },
  }),
  req(
    "repetition detection",
    scripted([5, 6, 5, 6, 5, 6, 5, 6, 5, 6], {
      maxTokens: 10,
      repetitionDetection: { maxPatternSize: 2, minPatternSize: 1, minCount: 3 },
    }),
  ),
  // Prefix caching (vLLM's is on by default): a prompt seen before, in full 16-token blocks.
  req("prefix cache: a 40-token prompt, first time", {
    promptTokenIds: SHARED_PROMPT,
    samplingParams: { maxTokens: 2, extraArgs: { scripted_token_ids: [11, 22] } },
  }),
  req("prefix cache: the same prompt again (32 of 40 tokens cached)", {
    promptTokenIds: SHARED_PROMPT,
    samplingParams: { maxTokens: 2, extraArgs: { scripted_token_ids: [11, 22] } },
  }),
  req("prefix cache: the same prompt with prompt logprobs (skip_reading_prefix_cache)", {
    promptTokenIds: SHARED_PROMPT,
    samplingParams: { maxTokens: 2, promptLogprobs: 1, extraArgs: { scripted_token_ids: [11, 22] } },
  }),
  req("prefix cache: the same prompt with another cache_salt", {
    promptTokenIds: SHARED_PROMPT,
    samplingParams: { maxTokens: 2, extraArgs: { scripted_token_ids: [11, 22] } },
    cacheSalt: "other-salt",
  }),
  // Logprobs.
  req("logprobs 0", scripted([11, 22, 33], { maxTokens: 3, logprobs: 0 })),
  req("logprobs 3", scripted([11, 22, 33], { maxTokens: 3, logprobs: 3 })),
  req("logprobs -1 (whole vocabulary)", scripted([11, 22], { maxTokens: 2, logprobs: -1 })),
  req("prompt logprobs 2", scripted([11, 22], { maxTokens: 2, promptLogprobs: 2 })),
  req(
    "prompt logprobs 0 and logprobs 1",
    scripted([11, 22], { maxTokens: 2, promptLogprobs: 0, logprobs: 1 }),
  ),
  req("prompt logprobs, one-token prompt", {
    promptTokenIds: [4242],
    samplingParams: { maxTokens: 2, promptLogprobs: 1, extraArgs: { scripted_token_ids: [11, 22] } },
  }),
  // Sampling fields: accepted identically (the tokens are scripted on both sides).
  req(
    "temperature/top_p/top_k/min_p/seed",
    scripted([11, 22], { maxTokens: 2, temperature: 0.7, topP: 0.9, topK: 5, minP: 0.1, seed: 42 }),
  ),
  req(
    "penalties",
    scripted([11, 22], { maxTokens: 2, presencePenalty: 0.5, frequencyPenalty: 0.5, repetitionPenalty: 1.2 }),
  ),
  req(
    "logit_bias and allowed_token_ids",
    scripted([11, 22], { maxTokens: 2, logitBias: { 11: 1.5 }, allowedTokenIds: [11, 22, 33] }),
  ),
  req("bad_words", scripted([11, 22], { maxTokens: 2, badWords: ["foo"] })),
  req("n > 1 with greedy sampling is refused", scripted([11], { maxTokens: 2, n: 2, temperature: 0 })),
  req("negative temperature is refused", scripted([11], { maxTokens: 2, temperature: -1 })),
  req("logprob_token_ids", scripted([11, 22], { maxTokens: 2, logprobs: 1, logprobTokenIds: [11, 5] })),
  // Request fields the engine echoes or ignores.
  req("trace headers", {
    ...scripted([11, 22], { maxTokens: 2 }),
    traceHeaders: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
  }),
  req("priority and cache_salt", { ...scripted([11, 22], { maxTokens: 2 }), priority: 3, cacheSalt: "salt" }),
  req("max_tokens None (the preprocessing error path)", {
    promptTokenIds: prompt(),
    samplingParams: { maxTokens: null, extraArgs: { scripted_token_ids: [11] } },
  }),
  // Aborts.
  req(
    "abort before the first output",
    {
      promptTokenIds: prompt(ABORTED_PROMPT_LENGTH),
      samplingParams: { maxTokens: 200, extraArgs: { scripted_token_ids: SCRIPT } },
    },
    { abort: "before-first" },
  ),
  req("abort mid-stream", scripted(SCRIPT, { maxTokens: 200 }), { abort: 2 }),
  req("after the aborts: the engine is idle and serves", scripted([11, 22], { maxTokens: 2 })),
  // Scheduling seen through outputs: requests sharing a step, pauses with requests in flight.
  {
    name: "two requests admitted in one step share the batch's logprobs width",
    kind: "sequence",
    run: async (client, id) => {
      // PAUSED_ALL queues both ADDs; the resume (sent after them on the same socket) schedules them together.
      await client.callUtility("pause_scheduler", ["keep"]);
      const a = scripted([11, 22, 33], { maxTokens: 3, logprobs: 1 });
      const b = scripted([44, 55], { maxTokens: 2, logprobs: 4 });
      const streamA = await client.call({ ...a, requestId: `${id}-a` });
      const streamB = await client.call({ ...b, requestId: `${id}-b` });
      await client.callUtility("resume_scheduler", []);
      const [oa, ob] = await Promise.all([
        observeStream(streamA, a.promptTokenIds ?? []),
        observeStream(streamB, b.promptTokenIds ?? []),
      ]);
      return { a: oa, b: ob };
    },
  },
  {
    name: "pause_scheduler(abort) ends a running request with ABORT",
    kind: "sequence",
    run: async (client, id) => {
      const r = scripted(SCRIPT, { maxTokens: 200 });
      const stream = await client.call({ ...r, requestId: id });
      const outputs: EngineCoreOutput[] = [];
      let paused: Promise<unknown> | null = null;
      for await (const output of stream) {
        outputs.push(output);
        if (outputs.length === 2) paused = client.callUtility("pause_scheduler", ["abort"]);
      }
      const pauseResult = plain(await paused);
      const stillPaused = plain(await client.callUtility("is_scheduler_paused", []));
      await client.callUtility("resume_scheduler", []);
      // How many tokens arrive between the pause being sent and taking effect is timing: compare the first
      // two and the terminal output.
      const last = outputs[outputs.length - 1];
      return {
        firstTokens: outputs.slice(0, 2).flatMap((o) => o.newTokenIds),
        last: last ? outputShape(last, r.promptTokenIds ?? []) : null,
        pauseResult,
        stillPaused,
      };
    },
  },
  {
    name: "pause_scheduler(wait) answers once the running request finished",
    kind: "sequence",
    run: async (client, id) => {
      const r = scripted(SCRIPT, { maxTokens: 5 });
      const stream = await client.call({ ...r, requestId: id });
      const events: string[] = [];
      let paused: Promise<unknown> | null = null;
      const outputs: EngineCoreOutput[] = [];
      for await (const output of stream) {
        outputs.push(output);
        if (outputs.length === 1) {
          paused = client.callUtility("pause_scheduler", ["wait"]).then((v) => {
            events.push("paused");
            return v;
          });
        }
      }
      events.push("finished");
      const pauseResult = plain(await paused);
      await client.callUtility("resume_scheduler", []);
      return {
        tokens: outputs.flatMap((o) => o.newTokenIds),
        finishReason: outputs.at(-1)?.finishReason,
        events,
        pauseResult,
      };
    },
  },
  // Utilities.
  util("is_sleeping", "is_sleeping", []),
  util("get_supported_tasks", "get_supported_tasks", []),
  util("reset_prefix_cache", "reset_prefix_cache", []),
  util("reset_prefix_cache(True, False)", "reset_prefix_cache", [true, false]),
  util("reset_mm_cache", "reset_mm_cache", []),
  util("reset_encoder_cache", "reset_encoder_cache", []),
  util("execute_dummy_batch", "execute_dummy_batch", []),
  util("list_loras", "list_loras", []),
  util("remove_lora of an unknown id", "remove_lora", [7]),
  util("pin_lora of an unknown id", "pin_lora", [7]),
  util("add_lora", "add_lora", [["adapter", 1, "/tmp/adapter"]]),
  util("add_lora with an object", "add_lora", [{ lora_name: "a", lora_int_id: 1, lora_path: "/x" }]),
  util("add_lora with a short array", "add_lora", [["a"]]),
  util("add_lora with a bool id", "add_lora", [["a", true, "/x"]]),
  util("add_lora without arguments", "add_lora", []),
  util("is_scheduler_paused", "is_scheduler_paused", []),
  util("pause_scheduler(keep)", "pause_scheduler", ["keep"]),
  util("is_scheduler_paused while paused", "is_scheduler_paused", []),
  util("resume_scheduler", "resume_scheduler", []),
  util("pause_scheduler with an unknown mode", "pause_scheduler", ["later"]),
  util("get_weight_version", "get_weight_version", []),
  util("set_weight_version", "set_weight_version", ["v2"]),
  util("get_weight_version after set", "get_weight_version", []),
  util("collective_rpc check_health", "collective_rpc", ["check_health"]),
  util("collective_rpc of an unknown worker method", "collective_rpc", ["no_such_worker_method"]),
  util("profile start", "profile", [true]),
  util(
    "save_sharded_state",
    "save_sharded_state",
    ["/tmp/differential-sharded"],
    "the model-free worker has no save_sharded_state (\"Method 'save_sharded_state' is not implemented.\"); the mock plays a worker that has",
  ),
  util(
    "save_sharded_state with a non-str path",
    "save_sharded_state",
    [1],
    "the model-free worker has no save_sharded_state; the mock fails where os.path.join would",
  ),
  util("unknown method", "no_such_method", []),
  util("too many arguments", "is_sleeping", [1]),
  util("sleep with a str level", "sleep", ["deep"]),
  util("sleep(0)", "sleep", [0]),
  util("is_sleeping after sleep(0)", "is_sleeping", []),
  util("wake_up", "wake_up", [null]),
  util("is_sleeping after wake_up", "is_sleeping", []),
  req("after the utilities: the engine serves", scripted([11, 22], { maxTokens: 2 })),
  // Last: the executor raises inside the step, which is fatal for the engine.
  req("malformed script (a string id) kills the engine", {
    promptTokenIds: prompt(),
    samplingParams: { maxTokens: 3, extraArgs: { scripted_token_ids: [11, "x"] } },
  }),
];

interface RunResult {
  readonly observations: Map<string, Observation>;
  readonly stats: SchedulerStats[];
  readonly ms: number;
}

async function observeStream(
  stream: AsyncIterable<EngineCoreOutput>,
  promptTokenIds: readonly number[],
): Promise<RequestObservation> {
  const outputs: EngineCoreOutput[] = [];
  let error = null;
  try {
    for await (const output of stream) outputs.push(output);
  } catch (e) {
    error = errorObservation(e);
  }
  const last = outputs[outputs.length - 1];
  return {
    kind: "request",
    outputs: outputs.map((o) => outputShape(o, promptTokenIds)),
    tokenIds: outputs.flatMap((o) => o.newTokenIds),
    finishReason: last?.finishReason ?? null,
    stopReason: last?.stopReason ?? null,
    error,
  };
}

async function observeRequest(
  client: EngineCoreClient,
  requestId: string,
  scenario: Extract<Scenario, { kind: "request" }>,
): Promise<RequestObservation> {
  const outputs: EngineCoreOutput[] = [];
  let error = null;
  try {
    const stream = await client.call({ ...scenario.request, requestId });
    if (scenario.abort === "before-first") await client.abort([requestId]);
    for await (const output of stream) {
      outputs.push(output);
      if (typeof scenario.abort === "number" && outputs.length === scenario.abort) {
        await client.abort([requestId]);
      }
    }
  } catch (e) {
    error = errorObservation(e);
  }
  const shapes = outputs.map((o) => outputShape(o, scenario.request.promptTokenIds ?? []));
  const last = outputs[outputs.length - 1];
  return {
    kind: "request",
    outputs: shapes,
    tokenIds: outputs.flatMap((o) => o.newTokenIds),
    finishReason: last?.finishReason ?? null,
    stopReason: last?.stopReason ?? null,
    error,
  };
}

async function observeUtility(
  client: EngineCoreClient,
  scenario: Extract<Scenario, { kind: "utility" }>,
): Promise<UtilityObservation> {
  try {
    const [result] = await client.callUtility(scenario.method, scenario.args, { timeoutMs: 30_000 });
    return { kind: "utility", ok: true, result: plain(result) };
  } catch (e) {
    return { kind: "utility", ok: false, error: errorObservation(e) };
  }
}

async function runCorpus(client: EngineCoreClient): Promise<RunResult> {
  const started = performance.now();
  const stats: SchedulerStats[] = [];
  const unsubscribe = client.onSchedulerStats((_engine, s) => stats.push(s));
  const observations = new Map<string, Observation>();
  for (const [i, scenario] of corpus.entries()) {
    let observation: unknown;
    if (scenario.kind === "request") observation = await observeRequest(client, `diff-${i}`, scenario);
    else if (scenario.kind === "utility") observation = await observeUtility(client, scenario);
    else {
      try {
        observation = await scenario.run(client, `diff-${i}`);
      } catch (e) {
        observation = { error: errorObservation(e) };
      }
    }
    observations.set(scenario.name, plain(observation) as Observation);
  }
  unsubscribe();
  return { observations, stats, ms: performance.now() - started };
}

describe.skipIf(!kit)(title("differential: the mock engine against vLLM's real engine core"), () => {
  const state: {
    real: RealEngine | null;
    realClient: EngineCoreClient | null;
    mock: MockEngineProcess | null;
    mockClient: EngineCoreClient | null;
    realRun: RunResult | null;
    mockRun: RunResult | null;
    modelDir: string | null;
  } = {
    real: null,
    realClient: null,
    mock: null,
    mockClient: null,
    realRun: null,
    mockRun: null,
    modelDir: null,
  };
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    if (!kit) return;
    const t0 = performance.now();
    const modelDir = mkdtempSync(join(tmpdir(), "differential-model-"));
    state.modelDir = modelDir;
    const config = JSON.parse(readFileSync(join(modelDirs.dense, "config.json"), "utf8"));
    writeFileSync(
      join(modelDir, "config.json"),
      JSON.stringify({ ...config, vocab_size: VOCAB, eos_token_id: CONFIG_EOS, bos_token_id: 1 }),
    );
    state.real = startRealEngine({
      kit,
      port: await freePort(),
      modelDir,
      maxModelLen: MAX_MODEL_LEN,
      executor: { stepMs: STEP_MS },
    });
    const mockAddress = `ipc://${join(modelDir, "mock-hs.sock")}`;
    state.mock = await startMockEngine({
      handshakeAddress: mockAddress,
      stepMs: STEP_MS,
      logStats: true,
      vllmVersion: "main",
      eosTokenId: CONFIG_EOS,
      readyResponse: { maxModelLen: MAX_MODEL_LEN },
    });
    const [realClient, mockClient] = await Promise.all([
      connectToRealEngine(state.real),
      EngineCoreClient.connect({
        transport: { mode: "handshake-owner", handshakeAddress: mockAddress, readyTimeoutMs: 20_000 },
      }),
    ]);
    state.realClient = realClient;
    state.mockClient = mockClient;
    timings.startupMs = performance.now() - t0;
    const [realRun, mockRun] = await Promise.all([runCorpus(realClient), runCorpus(mockClient)]);
    state.realRun = realRun;
    state.mockRun = mockRun;
    timings.realCorpusMs = realRun.ms;
    timings.mockCorpusMs = mockRun.ms;
    // For investigating a difference: DIFFERENTIAL_DUMP=file.json writes both runs and the engine log.
    const dump = process.env.DIFFERENTIAL_DUMP;
    if (dump) {
      writeFileSync(
        dump,
        JSON.stringify(
          {
            real: Object.fromEntries(realRun.observations),
            mock: Object.fromEntries(mockRun.observations),
            realStats: plain(realRun.stats.slice(0, 3)),
            mockStats: plain(mockRun.stats.slice(0, 3)),
            realLog: state.real.logLines.slice(-300),
          },
          null,
          1,
        ),
      );
    }
  });

  afterAll(async () => {
    await state.realClient?.shutdown().catch(() => {});
    await state.mockClient?.shutdown().catch(() => {});
    await state.real?.stop();
    await state.mock?.stop();
    if (state.modelDir) rmSync(state.modelDir, { recursive: true, force: true });
    console.log(
      `differential timings: ${JSON.stringify(Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v)])))}`,
    );
  });

  for (const scenario of corpus) {
    it(`${scenario.kind} "${scenario.name}"${scenario.knownDifference ? " (known difference)" : ""}`, () => {
      const real = state.realRun?.observations.get(scenario.name);
      const mock = state.mockRun?.observations.get(scenario.name);
      expect(real).toBeDefined();
      const differences = diff(real, mock);
      if (scenario.knownDifference) {
        // Documented in tools/mock-engine/README.md; the test still fails if the difference goes away.
        expect(differences, `expected a difference: ${scenario.knownDifference}`).not.toEqual([]);
        return;
      }
      expect(differences, JSON.stringify({ real, mock }, null, 1)).toEqual([]);
    });
  }

  it("SchedulerStats: the same fields and types on every step, sane values", () => {
    const real = state.realRun?.stats ?? [];
    const mock = state.mockRun?.stats ?? [];
    expect(real.length).toBeGreaterThan(0);
    expect(mock.length).toBeGreaterThan(0);
    const signatures = (all: SchedulerStats[]) => [
      ...new Set(all.map((s) => JSON.stringify(statsSignature(s)))),
    ];
    expect(signatures(mock)).toEqual(signatures(real));
    expect(real.flatMap(statsInsanity)).toEqual([]);
    expect(mock.flatMap(statsInsanity)).toEqual([]);
    // Prefix-cache lookups over the whole run (one per admitted request that did not skip the cache):
    // the requests run one after another, so the totals do not depend on timing.
    const totals = (all: SchedulerStats[]) =>
      all.reduce(
        (t, s) => ({
          requests: t.requests + s.prefixCacheStats.requests,
          queries: t.queries + s.prefixCacheStats.queries,
          hits: t.hits + s.prefixCacheStats.hits,
        }),
        { requests: 0, queries: 0, hits: 0 },
      );
    // The request aborted right after its ADD is admitted (and counted) or not, depending on whether the
    // engine's busy loop scheduled it before the ABORT arrived: the mock reads both in one go.
    const [r, m] = [totals(real), totals(mock)];
    const gap = { requests: r.requests - m.requests, queries: r.queries - m.queries, hits: r.hits - m.hits };
    expect([
      { requests: 0, queries: 0, hits: 0 },
      { requests: 1, queries: ABORTED_PROMPT_LENGTH, hits: 0 },
      { requests: -1, queries: -ABORTED_PROMPT_LENGTH, hits: 0 },
    ]).toContainEqual(gap);
    expect(totals(real).hits).toBeGreaterThan(0);
    // Both engines end idle.
    expect(real[real.length - 1]?.numRunningReqs).toBe(0);
    expect(mock[mock.length - 1]?.numRunningReqs).toBe(0);
  });
});
