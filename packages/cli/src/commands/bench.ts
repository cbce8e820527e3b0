// `bench`: an engine-core load generator modelled on `vllm bench serve` with the random dataset
// (vllm/benchmarks/serve.py benchmark / get_request / calculate_metrics): random token prompts, Poisson (or
// gamma) arrivals or all at once, a concurrency cap, optional warm-up, a live progress bar, the summary in
// vLLM's layout and a result JSON. Requests go straight to the engines over ZeroMQ: no HTTP, no tokenizer.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { type EngineCoreClient, FinishReason, finishReasonName } from "@vllm-engine-core/client";
import { bool, int, num, type ParsedArgs, str } from "../args.js";
import { arrivalOffsets } from "../bench/arrivals.js";
import { type BenchRequest, sampleRandomDataset } from "../bench/dataset.js";
import { calculateMetrics, METRIC_NAMES, type MetricName, type RequestRecord } from "../bench/metrics.js";
import { BenchProgress } from "../bench/progress.js";
import { SeededRandom } from "../bench/random.js";
import { formatSummary, resultJson } from "../bench/summary.js";
import type { Command } from "../command.js";
import { openSession, planConnection } from "../connection.js";
import { CliRuntimeError, CliUsageError, EXIT_OK } from "../errors.js";
import { sleep } from "../lifecycle.js";
import type { Output } from "../output.js";

const CMD = "bench";

/** `vllm bench serve` defaults (DEFAULT_NUM_PROMPTS, RandomDataset.DEFAULT_INPUT_LEN / DEFAULT_OUTPUT_LEN). */
const DEFAULTS = { numPrompts: 1000, inputLen: 1024, outputLen: 128, vocabSize: 32_000 };

interface BenchConfig {
  numPrompts: number;
  inputLen: number;
  outputLen: number;
  rangeRatio: number;
  vocabSize: number;
  maxConcurrency: number | null;
  requestRate: number;
  burstiness: number;
  seed: number;
  warmup: number;
  selectedMetrics: MetricName[];
  percentiles: number[];
  jsonFile: string | undefined;
  progress: boolean;
}

/** One of two spellings (ours and vLLM's `--random-*`); both given must agree. */
function either(
  ours: string,
  theirs: string,
  read: (name: string) => number | undefined,
): number | undefined {
  const a = read(ours);
  const b = read(theirs);
  if (a !== undefined && b !== undefined && a !== b) {
    throw new CliUsageError(`--${ours} ${a} and --${theirs} ${b} disagree (they are the same setting)`, CMD);
  }
  return a ?? b;
}

function parseConfig(args: ParsedArgs): BenchConfig {
  const posInt = (name: string) => int(args, CMD, name, { min: 1 });
  const ratio = (name: string) =>
    num(args, CMD, name, { ok: (n) => n >= 0 && n < 1, expected: "a number in [0, 1)" });
  const metrics = (str(args, "percentile-metrics") ?? METRIC_NAMES.join(","))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const m of metrics) {
    if (!METRIC_NAMES.includes(m as MetricName)) {
      throw new CliUsageError(
        `--percentile-metrics: unknown metric ${JSON.stringify(m)} (allowed: ${METRIC_NAMES.join(", ")})`,
        CMD,
      );
    }
  }
  const percentiles = (str(args, "metric-percentiles") ?? "99").split(",").map((s) => {
    const p = Number(s);
    if (s.trim() === "" || !(p > 0 && p < 100)) {
      throw new CliUsageError(
        `--metric-percentiles needs numbers in (0, 100) like 50,90,99, got ${JSON.stringify(s)}`,
        CMD,
      );
    }
    return p;
  });
  return {
    numPrompts: posInt("num-prompts") ?? DEFAULTS.numPrompts,
    inputLen: either("input-len", "random-input-len", posInt) ?? DEFAULTS.inputLen,
    outputLen: either("output-len", "random-output-len", posInt) ?? DEFAULTS.outputLen,
    rangeRatio: either("range-ratio", "random-range-ratio", ratio) ?? 0,
    vocabSize: int(args, CMD, "vocab-size", { min: 1, max: 2 ** 32 - 1 }) ?? DEFAULTS.vocabSize,
    maxConcurrency: posInt("max-concurrency") ?? null,
    requestRate:
      num(args, CMD, "request-rate", {
        ok: (n) => n > 0,
        expected: "a positive number or inf",
        allowInf: true,
      }) ?? Number.POSITIVE_INFINITY,
    burstiness:
      num(args, CMD, "burstiness", { ok: (n) => n > 0, expected: "a positive number", allowInf: true }) ?? 1,
    seed: int(args, CMD, "seed", { min: 0, max: 2 ** 32 - 1 }) ?? 0,
    warmup: either("warmup", "num-warmups", (n) => int(args, CMD, n, { min: 0 })) ?? 0,
    selectedMetrics: metrics as MetricName[],
    percentiles,
    jsonFile: str(args, "json"),
    progress: !bool(args, "no-progress"),
  };
}

/** A counting semaphore for --max-concurrency (vLLM's asyncio.Semaphore around each request). */
class Semaphore {
  #free: number;
  readonly #waiters: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }
  async acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#free++;
  }
}

const now = () => performance.now() / 1000;

/**
 * One request, timed like vLLM's request functions (endpoint_request_func.py): send time after the concurrency
 * slot is taken, TTFT at the first output with tokens, one ITL per later output, latency at the last one.
 */
async function runRequest(
  client: EngineCoreClient,
  request: BenchRequest,
  requestId: string,
  signal: AbortSignal,
  progress: BenchProgress | undefined,
): Promise<RequestRecord> {
  const record: RequestRecord = {
    promptLen: request.promptTokenIds.length,
    expectedOutputLen: request.outputLen,
    success: false,
    error: "",
    startTime: now(),
    ttft: 0,
    itl: [],
    latency: 0,
    outputTokens: 0,
  };
  const st = record.startTime;
  let last = st;
  let finish: number | null = null;
  try {
    const stream = await client.call(
      {
        requestId,
        promptTokenIds: request.promptTokenIds,
        // serve.py sends max_tokens = the sampled output length and ignore_eos for the random dataset.
        samplingParams: { maxTokens: request.outputLen, ignoreEos: true },
      },
      { signal },
    );
    for await (const output of stream) {
      const n = output.newTokenIds.length;
      if (n > 0) {
        const t = now();
        if (record.outputTokens === 0) record.ttft = t - st;
        else record.itl.push(t - last);
        last = t;
        record.outputTokens += n;
        progress?.tokens(n);
      }
      if (output.finishReason != null) finish = output.finishReason;
    }
    record.latency = last - st;
    if (finish === FinishReason.STOP || finish === FinishReason.LENGTH) {
      record.success = record.outputTokens > 0;
      if (!record.success) record.error = "Never received a valid chunk to calculate TTFT.";
    } else {
      record.error = `finished with reason ${finish === null ? "none" : finishReasonName(finish)}`;
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    record.error = error instanceof Error ? error.message : String(error);
  }
  progress?.requestDone();
  return record;
}

async function runAll(
  client: EngineCoreClient,
  requests: readonly BenchRequest[],
  offsets: readonly number[],
  maxConcurrency: number | null,
  signal: AbortSignal,
  progress: BenchProgress | undefined,
  idPrefix: string,
): Promise<RequestRecord[]> {
  const semaphore = maxConcurrency === null ? undefined : new Semaphore(maxConcurrency);
  const start = performance.now();
  const tasks: Promise<RequestRecord>[] = [];
  for (const [i, request] of requests.entries()) {
    const wait = start + offsets[i]! * 1000 - performance.now();
    if (wait > 0) await sleep(wait, signal);
    signal.throwIfAborted();
    tasks.push(
      (async () => {
        await semaphore?.acquire();
        try {
          signal.throwIfAborted();
          return await runRequest(client, request, `${idPrefix}-${i}`, signal, progress);
        } finally {
          semaphore?.release();
        }
      })(),
    );
  }
  return Promise.all(tasks);
}

function printTraffic(out: Output, config: BenchConfig): void {
  const rate = config.requestRate === Number.POSITIVE_INFINITY ? "inf" : String(config.requestRate);
  const distribution = config.burstiness === 1 ? "Poisson process" : "Gamma distribution";
  out.line(`Traffic request rate: ${rate}`);
  // Python prints the float: 1.0, 0.5, inf.
  const burstiness = Number.isInteger(config.burstiness)
    ? config.burstiness.toFixed(1)
    : String(config.burstiness);
  out.line(
    `Burstiness factor: ${config.burstiness === Number.POSITIVE_INFINITY ? "inf" : burstiness} (${distribution})`,
  );
  out.line(`Maximum request concurrency: ${config.maxConcurrency ?? "None"}`);
}

export const benchCommand: Command = {
  spec: {
    name: CMD,
    summary: "benchmark the engines like `vllm bench serve` (random prompts), with no HTTP layer in between",
    connects: true,
    flags: [
      { name: "num-prompts", type: "string", value: "N", help: "requests to send (default 1000)" },
      { name: "input-len", type: "string", value: "N", help: "prompt tokens per request (default 1024)" },
      { name: "random-input-len", type: "string", value: "N", help: "vLLM spelling of --input-len" },
      {
        name: "output-len",
        type: "string",
        value: "N",
        help: "tokens to generate per request (default 128)",
      },
      { name: "random-output-len", type: "string", value: "N", help: "vLLM spelling of --output-len" },
      {
        name: "range-ratio",
        type: "string",
        value: "R",
        help: "sample lengths uniformly in [len·(1−R), len·(1+R)] (default 0)",
      },
      { name: "random-range-ratio", type: "string", value: "R", help: "vLLM spelling of --range-ratio" },
      {
        name: "vocab-size",
        type: "string",
        value: "N",
        help: "random token ids are below this; set it to the model's vocabulary size (default 32000)",
      },
      {
        name: "max-concurrency",
        type: "string",
        value: "N",
        help: "at most N requests in flight (default no cap)",
      },
      {
        name: "request-rate",
        type: "string",
        value: "R",
        help: "requests per second with Poisson arrivals, or inf to send all at once (default inf)",
      },
      {
        name: "burstiness",
        type: "string",
        value: "B",
        help: "gamma shape of the arrival intervals (default 1 = Poisson); < 1 burstier, > 1 more even",
      },
      { name: "seed", type: "string", value: "N", help: "seed of the prompts and arrival times (default 0)" },
      {
        name: "warmup",
        type: "string",
        value: "N",
        help: "warm-up requests before the measured run (default 0)",
      },
      { name: "num-warmups", type: "string", value: "N", help: "vLLM spelling of --warmup" },
      {
        name: "percentile-metrics",
        type: "string",
        value: "M,…",
        help: "metrics to report: ttft,tpot,itl,e2el (default all four)",
      },
      {
        name: "metric-percentiles",
        type: "string",
        value: "P,…",
        help: "percentiles to report (default 99)",
      },
      {
        name: "json",
        type: "string",
        value: "FILE",
        help: "write every figure, per-request data and the config here",
      },
      { name: "no-progress", type: "boolean", help: "no progress bar or progress lines" },
    ],
    notes: [
      "Metrics as vllm bench serve defines them: TTFT = first output with tokens − send; ITL = gap between",
      "outputs; E2EL = last output − send; TPOT = (E2EL − TTFT) / (output tokens − 1). Mean, median, P99.",
      "The progress bar (stderr) is drawn on a terminal; otherwise a line per 10% of the run.",
    ],
  },
  async run({ args, lifecycle, out }) {
    const config = parseConfig(args);
    const rng = new SeededRandom(config.seed);
    const requests = sampleRandomDataset(config, rng);
    const offsets = arrivalOffsets(config.numPrompts, config.requestRate, config.burstiness, rng);
    const { client } = await openSession(planConnection(args, CMD), lifecycle, out.notice);

    const longest = Math.max(...requests.map((r) => r.promptTokenIds.length));
    if (longest > client.maxModelLen) {
      throw new CliUsageError(
        `prompts of up to ${longest} tokens do not fit the engines' max_model_len ${client.maxModelLen}; lower --input-len`,
        CMD,
      );
    }
    const signal = lifecycle.signal;
    const runId = randomUUID().slice(0, 8);
    if (config.warmup > 0) {
      out.line(`Warming up with ${config.warmup} requests...`);
      const first = requests[0]!;
      await runAll(
        client,
        Array.from({ length: config.warmup }, () => first),
        new Array<number>(config.warmup).fill(0),
        config.maxConcurrency,
        signal,
        undefined,
        `bench-${runId}-warmup`,
      );
      out.line("Warmup run completed.");
    }
    out.line("Starting main benchmark run...");
    printTraffic(out, config);
    const progress = config.progress ? new BenchProgress(out, config.numPrompts, "bench", true) : undefined;
    const started = now();
    let records: RequestRecord[];
    try {
      records = await runAll(
        client,
        requests,
        offsets,
        config.maxConcurrency,
        signal,
        progress,
        `bench-${runId}`,
      );
    } finally {
      progress?.finish();
    }
    const durationS = now() - started;
    const metrics = calculateMetrics(records, durationS, config.percentiles);

    const failures = records.filter((r) => !r.success);
    if (failures.length > 0) {
      out.line("Failed requests during benchmark run detected (capping to 10):");
      for (const [i, r] of failures.slice(0, 10).entries()) out.line(`Error ${i}: ${r.error}`);
    }
    out.line(
      formatSummary(metrics, {
        maxConcurrency: config.maxConcurrency,
        requestRate: config.requestRate,
        durationS,
        selectedMetrics: config.selectedMetrics,
      }),
    );
    if (config.jsonFile !== undefined) {
      const configJson = {
        backend: "vllm-engine-core",
        dataset_name: "random",
        num_prompts: config.numPrompts,
        random_input_len: config.inputLen,
        random_output_len: config.outputLen,
        random_range_ratio: config.rangeRatio,
        vocab_size: config.vocabSize,
        request_rate: config.requestRate === Number.POSITIVE_INFINITY ? "inf" : config.requestRate,
        burstiness: config.burstiness,
        max_concurrency: config.maxConcurrency,
        seed: config.seed,
        num_warmups: config.warmup,
        percentile_metrics: config.selectedMetrics.join(","),
        metric_percentiles: config.percentiles.join(","),
        engine_count: client.engineCount,
        vllm_version: client.vllmVersion,
        max_model_len: client.maxModelLen,
        date: new Date().toISOString(),
      };
      const result = resultJson(metrics, records, durationS, configJson, config.selectedMetrics);
      writeFileSync(config.jsonFile, `${JSON.stringify(result, null, 2)}\n`);
      out.notice(`results written to ${config.jsonFile}`);
    }
    if (metrics.completed === 0) {
      throw new CliRuntimeError(
        `all ${records.length} requests failed (first error: ${failures[0]?.error ?? "unknown"})`,
      );
    }
    return EXIT_OK;
  },
};
