// vLLM's Prometheus frontend metrics for an EngineCoreClient, modelled on vllm/v1/metrics/loggers.py
// PrometheusStatLogger (pinned revision c67fe497) and vllm/v1/spec_decode/metrics.py SpecDecodingProm:
// the same names, types, help texts, label names and buckets, updated the way PrometheusStatLogger.record
// updates them — from each engine's SchedulerStats and from what this client's streams receive (the
// IterationStats of vllm/v1/metrics/stats.py, derived in @vllm-engine-core/client's request timings).
//
// Counter names carry `_total` here: Python's prometheus_client (and Rust's prometheus-client, see
// rust/src/metrics/src/lib.rs) append it when exposing `Counter(name="vllm:x")`; prom-client exposes the
// name as given.
import type {
  EngineCoreClient,
  OutputRecord,
  RequestTimings,
  SchedulerStats,
} from "@vllm-engine-core/client";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import {
  build125Buckets,
  INTER_TOKEN_LATENCY_BUCKETS,
  ITERATION_TOKENS_BUCKETS,
  REQUEST_LATENCY_BUCKETS,
  REQUEST_PARAMS_N_BUCKETS,
  TIME_TO_FIRST_TOKEN_BUCKETS,
} from "./buckets.js";
import { CounterSeries, collectHistogramSeries, HistogramSeries } from "./fast-series.js";

/** What instrument() reads of the client. */
export type MetricsClient = Pick<
  EngineCoreClient,
  | "modelName"
  | "engineIndices"
  | "maxModelLen"
  | "readyResponses"
  | "onSchedulerStats"
  | "observeOutputs"
  | "onSleepStateChange"
>;

export interface InstrumentOptions {
  /** Where to register (default: a new Registry). */
  registry?: Registry;
  /**
   * `model_name` overrides the client's served model name (vLLM: served_model_name); any other key is a
   * constant label added to every metric after vLLM's own labels.
   */
  labels?: Record<string, string>;
  /** vLLM registers `vllm:lora_requests_info` only with a LoRA config: pass its max_loras to get it. */
  maxLoras?: number;
}

export interface Instrumentation {
  readonly registry: Registry;
  /**
   * `vllm:engine_sleep_state`, as AsyncLLM.sleep / wake_up record it (StatLoggerManager.record_sleep_state):
   * `sleep` 1 with its level after `client.sleep(level)`, 0 after `client.wakeUp()`.
   */
  recordSleepState(sleep: 0 | 1, level?: number): void;
  /** Stops updating (unsubscribes from the client); the metrics stay registered. Idempotent. */
  close(): void;
}

// vllm/v1/engine/__init__.py FinishReason, str(reason) → the `finished_reason` label values.
const FINISH_REASONS = ["stop", "length", "abort", "error", "repetition"] as const;
// PromptTokenStats.ALL_SOURCES.
const PROMPT_SOURCES = ["local_compute", "local_cache_hit", "external_kv_transfer"] as const;
// WAITING_REASON_CAPACITY / WAITING_REASON_DEFERRED.
const WAITING_REASONS = ["capacity", "deferred"] as const;
const SLEEP_STATES = ["awake", "weights_offloaded", "discard_all"] as const;
/** How several registries' copies of an engine-state series combine (aggregateMetrics). */
const ENGINE_STATE = "max";

type Labels = Record<string, string>;

export function instrument(client: MetricsClient, options: InstrumentOptions = {}): Instrumentation {
  const registry = options.registry ?? new Registry();
  const { model_name: modelOverride, ...extra } = options.labels ?? {};
  const modelName = modelOverride ?? client.modelName;
  const extraNames = Object.keys(extra);
  const base = ["model_name", "engine", ...extraNames];
  const engines = client.engineIndices;
  const labelsOf = (engine: number, more: Labels = {}): Labels => ({
    model_name: modelName,
    engine: String(engine),
    ...extra,
    ...more,
  });
  const registers = [registry];
  // The scheduler gauges and the cache counters follow the engines' SchedulerStats, which every client
  // attached to a connection receives: several servers' registries hold the same values, so they aggregate by
  // `max` (aggregateMetrics); what a server counts of its own requests' outputs aggregates by `sum`. The sleep
  // gauge follows this client's own sleeps, not the engines' stats: `max` is right for it only while every
  // registry saw the same sleeps (README).
  const gauge = (name: string, help: string, more: string[] = []) =>
    new Gauge({ name, help, labelNames: [...base, ...more], registers, aggregator: ENGINE_STATE });
  const counter = (name: string, help: string, more: string[] = [], engineState = false) =>
    new Counter({
      name: `${name}_total`,
      help,
      labelNames: [...base, ...more],
      registers,
      ...(engineState ? { aggregator: ENGINE_STATE } : {}),
    });
  const histogram = (name: string, help: string, buckets: number[]) =>
    new Histogram({ name, help, buckets, labelNames: base, registers, collect: collectHistogramSeries });
  const maxModelLen = client.maxModelLen;

  // ---- scheduler state (gauges) --------------------------------------------------------------
  const running = gauge("vllm:num_requests_running", "Number of requests in model execution batches.");
  const waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.");
  const waitingByReason = gauge(
    "vllm:num_requests_waiting_by_reason",
    "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; " +
      "'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). " +
      "Sum of all reasons equals vllm:num_requests_waiting.",
    ["reason"],
  );
  const sleepState = gauge(
    "vllm:engine_sleep_state",
    "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; " +
      "weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.",
    ["sleep_state"],
  );
  const kvCacheUsage = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.");

  // ---- cache counters --------------------------------------------------------------------------
  const prefixQueries = counter(
    "vllm:prefix_cache_queries",
    "Prefix cache queries, in terms of number of queried tokens.",
    [],
    true,
  );
  const prefixHits = counter(
    "vllm:prefix_cache_hits",
    "Prefix cache hits, in terms of number of cached tokens.",
    [],
    true,
  );
  const externalQueries = counter(
    "vllm:external_prefix_cache_queries",
    "External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.",
    [],
    true,
  );
  const externalHits = counter(
    "vllm:external_prefix_cache_hits",
    "External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.",
    [],
    true,
  );
  const mmQueries = counter(
    "vllm:mm_cache_queries",
    "Multi-modal cache queries, in terms of number of queried items.",
    [],
    true,
  );
  const mmHits = counter(
    "vllm:mm_cache_hits",
    "Multi-modal cache hits, in terms of number of cached items.",
    [],
    true,
  );

  // ---- iteration counters ----------------------------------------------------------------------
  const preemptions = counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.");
  const promptTokens = counter("vllm:prompt_tokens", "Number of prefill tokens processed.");
  const promptBySource = counter("vllm:prompt_tokens_by_source", "Number of prompt tokens by source.", [
    "source",
  ]);
  const promptCached = counter(
    "vllm:prompt_tokens_cached",
    "Number of cached prompt tokens (local + external).",
  );
  const generationTokens = counter("vllm:generation_tokens", "Number of generation tokens processed.");
  const success = counter("vllm:request_success", "Count of successfully processed requests.", [
    "finished_reason",
  ]);

  // ---- histograms --------------------------------------------------------------------------------
  const tokenBuckets = build125Buckets(maxModelLen);
  const reqPromptTokens = histogram(
    "vllm:request_prompt_tokens",
    "Number of prefill tokens processed.",
    tokenBuckets,
  );
  const reqGenerationTokens = histogram(
    "vllm:request_generation_tokens",
    "Number of generation tokens processed.",
    tokenBuckets,
  );
  const iterationTokens = histogram(
    "vllm:iteration_tokens_total",
    "Histogram of number of tokens per engine_step.",
    ITERATION_TOKENS_BUCKETS,
  );
  const maxGenerationTokens = histogram(
    "vllm:request_max_num_generation_tokens",
    "Histogram of maximum number of requested generation tokens.",
    tokenBuckets,
  );
  const paramsN = histogram(
    "vllm:request_params_n",
    "Histogram of the n request parameter.",
    REQUEST_PARAMS_N_BUCKETS,
  );
  const paramsMaxTokens = histogram(
    "vllm:request_params_max_tokens",
    "Histogram of the max_tokens request parameter.",
    tokenBuckets,
  );
  const ttft = histogram(
    "vllm:time_to_first_token_seconds",
    "Histogram of time to first token in seconds.",
    TIME_TO_FIRST_TOKEN_BUCKETS,
  );
  const itl = histogram(
    "vllm:inter_token_latency_seconds",
    "Histogram of inter-token latency in seconds.",
    INTER_TOKEN_LATENCY_BUCKETS,
  );
  const tpot = histogram(
    "vllm:request_time_per_output_token_seconds",
    "Histogram of time_per_output_token_seconds per request.",
    INTER_TOKEN_LATENCY_BUCKETS,
  );
  const e2e = histogram(
    "vllm:e2e_request_latency_seconds",
    "Histogram of e2e request latency in seconds.",
    REQUEST_LATENCY_BUCKETS,
  );
  const queueTime = histogram(
    "vllm:request_queue_time_seconds",
    "Histogram of time spent in WAITING phase for request.",
    REQUEST_LATENCY_BUCKETS,
  );
  const inferenceTime = histogram(
    "vllm:request_inference_time_seconds",
    "Histogram of time spent in RUNNING phase for request.",
    REQUEST_LATENCY_BUCKETS,
  );
  const prefillTime = histogram(
    "vllm:request_prefill_time_seconds",
    "Histogram of time spent in PREFILL phase for request.",
    REQUEST_LATENCY_BUCKETS,
  );
  const decodeTime = histogram(
    "vllm:request_decode_time_seconds",
    "Histogram of time spent in DECODE phase for request.",
    REQUEST_LATENCY_BUCKETS,
  );
  const prefillKvComputed = histogram(
    "vllm:request_prefill_kv_computed_tokens",
    "Histogram of new KV tokens computed during prefill (excluding cached tokens).",
    tokenBuckets,
  );

  // ---- info gauges ---------------------------------------------------------------------------------
  // log_metrics_info("cache_config", ...): vLLM labels every CacheConfig field; the engine registers only
  // block_size and num_gpu_blocks of them, so those (and `engine`) are the labels here.
  const cacheInfo = new Gauge({
    name: "vllm:cache_config_info",
    help: "Information of the LLMEngine CacheConfig",
    labelNames: ["block_size", "num_gpu_blocks", "engine"],
    registers,
    aggregator: ENGINE_STATE,
  });
  client.readyResponses.forEach((ready, i) => {
    cacheInfo.set(
      {
        block_size: String(ready.blockSize ?? ""),
        num_gpu_blocks: String(ready.numGpuBlocks),
        engine: String(engines[i]),
      },
      1,
    );
  });
  const loraInfo =
    options.maxLoras === undefined
      ? undefined
      : new Gauge({
          name: "vllm:lora_requests_info",
          help: "Running stats on lora requests.",
          labelNames: ["max_lora", "waiting_lora_adapters", "running_lora_adapters"],
          registers,
          aggregator: ENGINE_STATE,
        });

  // ---- per-engine children (create_metric_per_engine: every series exists from the start) ----------
  const perEngine = new Map<number, EngineSeries>();
  for (const engine of engines) {
    const l = labelsOf(engine);
    const series: EngineSeries = {
      running: running.labels(l),
      waiting: waiting.labels(l),
      waitingCapacity: waitingByReason.labels(labelsOf(engine, { reason: WAITING_REASONS[0] })),
      waitingDeferred: waitingByReason.labels(labelsOf(engine, { reason: WAITING_REASONS[1] })),
      kvCacheUsage: kvCacheUsage.labels(l),
      prefixQueries: new CounterSeries(prefixQueries, l),
      prefixHits: new CounterSeries(prefixHits, l),
      externalQueries: new CounterSeries(externalQueries, l),
      externalHits: new CounterSeries(externalHits, l),
      preemptions: new CounterSeries(preemptions, l),
      promptTokens: new CounterSeries(promptTokens, l),
      promptBySource: PROMPT_SOURCES.map(
        (source) => new CounterSeries(promptBySource, labelsOf(engine, { source })),
      ),
      promptCached: new CounterSeries(promptCached, l),
      generationTokens: new CounterSeries(generationTokens, l),
      success: new Map(
        FINISH_REASONS.map((reason) => [
          reason,
          new CounterSeries(success, labelsOf(engine, { finished_reason: reason })),
        ]),
      ),
      reqPromptTokens: new HistogramSeries(reqPromptTokens, l),
      reqGenerationTokens: new HistogramSeries(reqGenerationTokens, l),
      iterationTokens: new HistogramSeries(iterationTokens, l),
      maxGenerationTokens: new HistogramSeries(maxGenerationTokens, l),
      paramsN: new HistogramSeries(paramsN, l),
      paramsMaxTokens: new HistogramSeries(paramsMaxTokens, l),
      ttft: new HistogramSeries(ttft, l),
      itl: new HistogramSeries(itl, l),
      tpot: new HistogramSeries(tpot, l),
      e2e: new HistogramSeries(e2e, l),
      queueTime: new HistogramSeries(queueTime, l),
      inferenceTime: new HistogramSeries(inferenceTime, l),
      prefillTime: new HistogramSeries(prefillTime, l),
      decodeTime: new HistogramSeries(decodeTime, l),
      prefillKvComputed: new HistogramSeries(prefillKvComputed, l),
    };
    for (const g of [series.running, series.waiting, series.waitingCapacity, series.waitingDeferred])
      g.set(0);
    series.kvCacheUsage.set(0);
    mmQueries.labels(l).inc(0);
    mmHits.labels(l).inc(0);
    perEngine.set(engine, series);
  }

  const recordSleepState = (sleep: 0 | 1, level = 0) => {
    // PrometheusStatLogger.record_sleep_state.
    const awake = sleep === 1 ? 0 : 1;
    const offloaded = sleep === 1 && level === 1 ? 1 : 0;
    const discardAll = sleep === 1 && level === 2 ? 1 : 0;
    for (const engine of engines) {
      sleepState.set(labelsOf(engine, { sleep_state: SLEEP_STATES[0] }), awake);
      sleepState.set(labelsOf(engine, { sleep_state: SLEEP_STATES[1] }), offloaded);
      sleepState.set(labelsOf(engine, { sleep_state: SLEEP_STATES[2] }), discardAll);
    }
  };
  recordSleepState(0);

  // ---- SchedulerStats (PrometheusStatLogger.record, scheduler_stats part) ----------------------------
  const spec = new SpecDecodingCounters(registers, base, labelsOf);
  const onStats = (engineIndex: number, stats: SchedulerStats) => {
    const s = perEngine.get(engineIndex);
    if (s === undefined) return;
    s.running.set(stats.numRunningReqs);
    s.waiting.set(stats.numWaitingReqs + stats.numSkippedWaitingReqs);
    s.waitingCapacity.set(stats.numWaitingReqs);
    s.waitingDeferred.set(stats.numSkippedWaitingReqs);
    s.kvCacheUsage.set(stats.kvCacheUsage);
    s.prefixQueries.inc(stats.prefixCacheStats.queries);
    s.prefixHits.inc(stats.prefixCacheStats.hits);
    const connector = stats.connectorPrefixCacheStats;
    if (connector !== null) {
      s.externalQueries.inc(connector.queries);
      s.externalHits.inc(connector.hits);
    }
    if (stats.specDecodingStats !== null) spec.observe(engineIndex, stats.specDecodingStats);
    if (loraInfo !== undefined) {
      loraInfo.setToCurrentTime({
        running_lora_adapters: Object.keys(stats.runningLoraAdapters).join(","),
        waiting_lora_adapters: Object.keys(stats.waitingLoraAdapters).join(","),
        max_lora: String(options.maxLoras),
      });
    }
  };

  // ---- IterationStats (PrometheusStatLogger.record, iteration_stats part) ---------------------------
  // vLLM records once per EngineCoreOutputs batch; the outputs of one batch reach the streams in one
  // synchronous delivery, so a batch is the run of records with the same engine and batch timestamp,
  // closed at the next microtask.
  const pending = new Map<number, PendingBatch>();
  let flushQueued = false;
  const flushEngine = (engineIndex: number) => {
    const batch = pending.get(engineIndex);
    if (batch === undefined) return;
    pending.delete(engineIndex);
    batch.flushed = true;
    const s = perEngine.get(engineIndex)!;
    s.generationTokens.inc(batch.generated);
    s.iterationTokens.observe(batch.computed + batch.generated);
  };
  const flushAll = () => {
    flushQueued = false;
    for (const engineIndex of [...pending.keys()]) flushEngine(engineIndex);
  };
  let last: { engineIndex: number; series: EngineSeries; batch: PendingBatch } | undefined;
  // IterationStats.update_from_finished_request (+ ParentRequest.observe_finished_request, n = 1).
  const recordFinished = (s: EngineSeries, finished: RequestTimings) => {
    s.success.get(finished.finishReason!)?.inc();
    s.e2e.observe(finished.e2eLatency ?? 0);
    s.queueTime.observe(finished.queuedTime ?? 0);
    s.prefillTime.observe(finished.prefillTime ?? 0);
    s.inferenceTime.observe(finished.inferenceTime ?? 0);
    s.decodeTime.observe(finished.decodeTime ?? 0);
    s.prefillKvComputed.observe(finished.numPromptTokens - Math.max(finished.numCachedTokens, 0));
    s.reqPromptTokens.observe(finished.numPromptTokens);
    s.reqGenerationTokens.observe(finished.numGenerationTokens);
    s.tpot.observe(finished.meanTimePerOutputToken ?? 0);
    if (finished.maxTokens) s.paramsMaxTokens.observe(finished.maxTokens);
    s.maxGenerationTokens.observe(finished.numGenerationTokens);
    s.paramsN.observe(1);
  };
  const onOutput = (record: OutputRecord) => {
    const finished = record.finished;
    if (finished !== null && finished.finishedBy === "frontend") {
      // A stop string finished it in the frontend, after the output that carried its tokens was counted:
      // only the finish is recorded (vLLM's output processor, same iteration), no tokens, no batch.
      const s = perEngine.get(record.engineIndex);
      if (s !== undefined && finished.finishReason !== null) recordFinished(s, finished);
      return;
    }
    let batch: PendingBatch | undefined;
    let s: EngineSeries | undefined;
    // Consecutive outputs of one batch: the same engine and timestamp as the previous record.
    if (
      last !== undefined &&
      last.engineIndex === record.engineIndex &&
      last.batch.timestamp === record.batchTimestamp &&
      !last.batch.flushed
    ) {
      batch = last.batch;
      s = last.series;
    } else {
      s = perEngine.get(record.engineIndex);
      if (s === undefined) return;
      batch = pending.get(record.engineIndex);
      if (batch !== undefined && batch.timestamp !== record.batchTimestamp) {
        flushEngine(record.engineIndex);
        batch = undefined;
      }
    }
    if (batch === undefined) {
      batch = { flushed: false, timestamp: record.batchTimestamp, computed: 0, generated: 0 };
      pending.set(record.engineIndex, batch);
      if (!flushQueued) {
        flushQueued = true;
        queueMicrotask(flushAll);
      }
    }
    if (last?.batch !== batch) last = { engineIndex: record.engineIndex, series: s, batch };
    batch.generated += record.newTokens;
    if (record.preemptions > 0) s.preemptions.inc(record.preemptions);
    if (!Number.isNaN(record.timeToFirstToken)) {
      s.ttft.observe(record.timeToFirstToken);
      const prefill = record.prefillStats;
      if (prefill !== null) {
        // PromptTokenStats.update_from_output.
        batch.computed += prefill.numComputedTokens;
        s.promptTokens.inc(prefill.numPromptTokens);
        s.promptBySource[0]!.inc(prefill.numComputedTokens);
        s.promptBySource[1]!.inc(prefill.numLocalCachedTokens);
        s.promptBySource[2]!.inc(prefill.numExternalCachedTokens);
        s.promptCached.inc(prefill.numCachedTokens);
      }
    } else if (!Number.isNaN(record.interTokenLatency)) {
      s.itl.observe(record.interTokenLatency);
    }
    if (finished !== null && finished.finishReason !== null) recordFinished(s, finished);
  };

  const unsubscribe = [
    client.onSchedulerStats(onStats),
    client.observeOutputs(onOutput),
    // The client's own sleep()/wakeUp(), as AsyncLLM.sleep/wake_up record it.
    client.onSleepStateChange((sleep, level) => recordSleepState(sleep, level)),
  ];
  let closed = false;
  return {
    registry,
    recordSleepState,
    close() {
      if (closed) return;
      closed = true;
      flushAll();
      for (const off of unsubscribe) off();
    },
  };
}

interface PendingBatch {
  flushed: boolean;
  timestamp: number;
  computed: number;
  generated: number;
}

type CounterChild = CounterSeries;
type GaugeChild = ReturnType<Gauge["labels"]>;
type HistogramChild = HistogramSeries;

interface EngineSeries {
  running: GaugeChild;
  waiting: GaugeChild;
  waitingCapacity: GaugeChild;
  waitingDeferred: GaugeChild;
  kvCacheUsage: GaugeChild;
  prefixQueries: CounterChild;
  prefixHits: CounterChild;
  externalQueries: CounterChild;
  externalHits: CounterChild;
  preemptions: CounterChild;
  promptTokens: CounterChild;
  promptBySource: CounterChild[];
  promptCached: CounterChild;
  generationTokens: CounterChild;
  success: Map<string, CounterChild>;
  reqPromptTokens: HistogramChild;
  reqGenerationTokens: HistogramChild;
  iterationTokens: HistogramChild;
  maxGenerationTokens: HistogramChild;
  paramsN: HistogramChild;
  paramsMaxTokens: HistogramChild;
  ttft: HistogramChild;
  itl: HistogramChild;
  tpot: HistogramChild;
  e2e: HistogramChild;
  queueTime: HistogramChild;
  inferenceTime: HistogramChild;
  prefillTime: HistogramChild;
  decodeTime: HistogramChild;
  prefillKvComputed: HistogramChild;
}

/**
 * SpecDecodingProm: vLLM registers these with a speculative config; the client learns of one from the first
 * SpecDecodingStats (num_spec_tokens gives the positions), so they are registered then.
 */
class SpecDecodingCounters {
  #counters:
    | { drafts: Counter; draftTokens: Counter; accepted: Counter; perPos: Counter; positions: number }
    | undefined;

  constructor(
    private readonly registers: Registry[],
    private readonly base: string[],
    private readonly labelsOf: (engine: number, more?: Labels) => Labels,
  ) {}

  observe(
    engineIndex: number,
    stats: {
      numSpecTokens: number;
      numDrafts: number;
      numDraftTokens: number;
      numAcceptedTokens: number;
      numAcceptedTokensPerPos: number[];
    },
  ): void {
    const { registers, base } = this;
    this.#counters ??= {
      drafts: new Counter({
        name: "vllm:spec_decode_num_drafts_total",
        help: "Number of spec decoding drafts.",
        labelNames: base,
        registers,
        aggregator: ENGINE_STATE,
      }),
      draftTokens: new Counter({
        name: "vllm:spec_decode_num_draft_tokens_total",
        help: "Number of draft tokens.",
        labelNames: base,
        registers,
        aggregator: ENGINE_STATE,
      }),
      accepted: new Counter({
        name: "vllm:spec_decode_num_accepted_tokens_total",
        help: "Number of accepted tokens.",
        labelNames: base,
        registers,
        aggregator: ENGINE_STATE,
      }),
      perPos: new Counter({
        name: "vllm:spec_decode_num_accepted_tokens_per_pos_total",
        help: "Accepted tokens per draft position.",
        labelNames: [...base, "position"],
        registers,
        aggregator: ENGINE_STATE,
      }),
      positions: stats.numSpecTokens,
    };
    const c = this.#counters;
    const l = this.labelsOf(engineIndex);
    c.drafts.inc(l, stats.numDrafts);
    c.draftTokens.inc(l, stats.numDraftTokens);
    c.accepted.inc(l, stats.numAcceptedTokens);
    for (let pos = 0; pos < c.positions; pos++) {
      c.perPos.inc(
        this.labelsOf(engineIndex, { position: String(pos) }),
        stats.numAcceptedTokensPerPos[pos] ?? 0,
      );
    }
  }
}
