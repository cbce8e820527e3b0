// vLLM's frontend metrics after a known workload against the mock engine (child process, vLLM's log_stats):
// names, types, label sets, buckets and values, scraped from the registry's text exposition.
import { expectedTokens } from "@vllm-engine-core/mock-engine";
import { afterEach, describe, expect, it } from "vitest";
import {
  build125Buckets,
  type Instrumentation,
  instrument,
  REQUEST_LATENCY_BUCKETS,
  TIME_TO_FIRST_TOKEN_BUCKETS,
} from "../src/index.js";
import {
  connectToMockEngine,
  drain,
  type Harness,
  parseExposition,
  type Sample,
  samples,
  types,
  until,
} from "./helpers.js";

// vllm/v1/metrics/loggers.py PrometheusStatLogger at the pin, as exposed by prometheus_client (counters
// gain `_total`). Written out here, independently of the package's own tables.
const EXPECTED_TYPES: Record<string, string> = {
  "vllm:num_requests_running": "gauge",
  "vllm:num_requests_waiting": "gauge",
  "vllm:num_requests_waiting_by_reason": "gauge",
  "vllm:engine_sleep_state": "gauge",
  "vllm:kv_cache_usage_perc": "gauge",
  "vllm:prefix_cache_queries_total": "counter",
  "vllm:prefix_cache_hits_total": "counter",
  "vllm:external_prefix_cache_queries_total": "counter",
  "vllm:external_prefix_cache_hits_total": "counter",
  "vllm:mm_cache_queries_total": "counter",
  "vllm:mm_cache_hits_total": "counter",
  "vllm:num_preemptions_total": "counter",
  "vllm:prompt_tokens_total": "counter",
  "vllm:prompt_tokens_by_source_total": "counter",
  "vllm:prompt_tokens_cached_total": "counter",
  "vllm:generation_tokens_total": "counter",
  "vllm:request_success_total": "counter",
  "vllm:request_prompt_tokens": "histogram",
  "vllm:request_generation_tokens": "histogram",
  "vllm:iteration_tokens_total": "histogram",
  "vllm:request_max_num_generation_tokens": "histogram",
  "vllm:request_params_n": "histogram",
  "vllm:request_params_max_tokens": "histogram",
  "vllm:time_to_first_token_seconds": "histogram",
  "vllm:inter_token_latency_seconds": "histogram",
  "vllm:request_time_per_output_token_seconds": "histogram",
  "vllm:e2e_request_latency_seconds": "histogram",
  "vllm:request_queue_time_seconds": "histogram",
  "vllm:request_inference_time_seconds": "histogram",
  "vllm:request_prefill_time_seconds": "histogram",
  "vllm:request_decode_time_seconds": "histogram",
  "vllm:request_prefill_kv_computed_tokens": "histogram",
  "vllm:cache_config_info": "gauge",
  "vllm:lora_requests_info": "gauge",
};
const EXTRA_LABEL: Record<string, string> = {
  "vllm:num_requests_waiting_by_reason": "reason",
  "vllm:engine_sleep_state": "sleep_state",
  "vllm:prompt_tokens_by_source_total": "source",
  "vllm:request_success_total": "finished_reason",
};

let harness: Harness | undefined;
let metrics: Instrumentation | undefined;
afterEach(async () => {
  metrics?.close();
  metrics = undefined;
  await harness?.close();
  harness = undefined;
});

interface Sent {
  requestId: string;
  engine: number;
  prompt: number[];
  maxTokens: number;
  stopAt?: number;
}

async function knownWorkload(): Promise<{ text: string; sent: Sent[]; received: Map<string, number[]> }> {
  harness = await connectToMockEngine({
    engineCount: 2,
    logStats: true,
    stepMs: 5,
    extraWaiting: 7,
    extraWaitingEngines: [1],
  });
  const { client } = harness;
  metrics = instrument(client, { maxLoras: 2 });
  const sent: Sent[] = [
    { requestId: "a", engine: 0, prompt: [1, 2, 3], maxTokens: 4 },
    { requestId: "b", engine: 0, prompt: [4, 5, 6, 7, 8], maxTokens: 6 },
    { requestId: "c", engine: 1, prompt: [9, 10], maxTokens: 3 },
    // Stops on its third token (stop_token_ids): finished_reason "stop".
    { requestId: "d", engine: 1, prompt: [11, 12, 13, 14], maxTokens: 9, stopAt: 2 },
  ];
  const streams = await Promise.all(
    sent.map((s) => {
      const stop =
        s.stopAt === undefined ? [] : [expectedTokens(s.requestId, s.prompt, s.stopAt + 1)[s.stopAt]!];
      return client.call({
        requestId: s.requestId,
        promptTokenIds: s.prompt,
        samplingParams: { maxTokens: s.maxTokens, stopTokenIds: stop },
        dataParallelRank: s.engine,
      });
    }),
  );
  const received = new Map<string, number[]>();
  await Promise.all(
    streams.map(async (stream, i) => {
      const outputs = await drain(stream);
      received.set(
        sent[i]!.requestId,
        outputs.flatMap((o) => o.newTokenIds),
      );
    }),
  );
  await until(
    () => client.schedulerStats(0)?.numRunningReqs === 0 && client.schedulerStats(1)?.numRunningReqs === 0,
    "both engines idle",
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  return { text: await metrics.registry.metrics(), sent, received };
}

function value(all: Sample[], name: string, labels: Record<string, string>): number {
  const found = all.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]!.value;
}

describe("instrument(client)", () => {
  it("exports vLLM's metrics with vLLM's names, types, labels, buckets and the workload's values", async () => {
    const { text, sent, received } = await knownWorkload();
    const all = samples(text);
    // Names and types.
    const declared = types(text);
    expect(Object.fromEntries(declared)).toEqual(EXPECTED_TYPES);
    // Label sets: vLLM's per-engine labels (plus the one extra label some metrics have).
    for (const s of all) {
      const family = [...declared.keys()].find(
        (n) =>
          s.name === n ||
          (declared.get(n) === "histogram" && /^(.*)_(bucket|sum|count)$/.exec(s.name)?.[1] === n),
      );
      expect(family, s.name).toBeDefined();
      const keys = Object.keys(s.labels).sort();
      if (family === "vllm:cache_config_info") {
        expect(keys).toEqual(["block_size", "engine", "num_gpu_blocks"]);
        continue;
      }
      if (family === "vllm:lora_requests_info") {
        expect(keys).toEqual(["max_lora", "running_lora_adapters", "waiting_lora_adapters"]);
        expect(s.labels.max_lora).toBe("2");
        continue;
      }
      const expected = ["engine", "model_name"];
      if (EXTRA_LABEL[family!]) expected.push(EXTRA_LABEL[family!]!);
      if (s.name.endsWith("_bucket")) expected.push("le");
      expect(keys, s.name).toEqual(expected.sort());
      expect(s.labels.model_name).toBe("mock-model");
      expect(["0", "1"]).toContain(s.labels.engine);
    }
    // Token counters: what was sent and received, per engine.
    for (const engine of [0, 1]) {
      const mine = sent.filter((s) => s.engine === engine);
      const e = { engine: String(engine) };
      const generated = mine.reduce((sum, s) => sum + received.get(s.requestId)!.length, 0);
      const prompted = mine.reduce((sum, s) => sum + s.prompt.length, 0);
      expect(value(all, "vllm:generation_tokens_total", e)).toBe(generated);
      expect(value(all, "vllm:prompt_tokens_total", e)).toBe(prompted);
      expect(value(all, "vllm:prompt_tokens_by_source_total", { ...e, source: "local_compute" })).toBe(
        prompted,
      );
      expect(value(all, "vllm:prompt_tokens_by_source_total", { ...e, source: "local_cache_hit" })).toBe(0);
      expect(value(all, "vllm:prompt_tokens_cached_total", e)).toBe(0);
      // Every admitted request queried the prefix cache for its prompt (PrefixCacheStats.record), no hits.
      expect(value(all, "vllm:prefix_cache_queries_total", e)).toBe(prompted);
      expect(value(all, "vllm:prefix_cache_hits_total", e)).toBe(0);
      // Per-request histograms: one observation per finished request.
      expect(value(all, "vllm:e2e_request_latency_seconds_count", e)).toBe(mine.length);
      expect(value(all, "vllm:time_to_first_token_seconds_count", e)).toBe(mine.length);
      expect(value(all, "vllm:request_generation_tokens_sum", e)).toBe(generated);
      expect(value(all, "vllm:request_prompt_tokens_sum", e)).toBe(prompted);
      expect(value(all, "vllm:request_params_max_tokens_sum", e)).toBe(
        mine.reduce((sum, s) => sum + s.maxTokens, 0),
      );
      expect(value(all, "vllm:request_params_n_sum", e)).toBe(mine.length);
      // One token per step: one inter-token latency per token after the first.
      expect(value(all, "vllm:inter_token_latency_seconds_count", e)).toBe(generated - mine.length);
      // iteration_tokens_total: computed prompt tokens + generated tokens, summed over the batches.
      expect(value(all, "vllm:iteration_tokens_total_sum", e)).toBe(prompted + generated);
      expect(value(all, "vllm:num_preemptions_total", e)).toBe(0);
      expect(value(all, "vllm:engine_sleep_state", { ...e, sleep_state: "awake" })).toBe(1);
    }
    expect(received.get("d")).toHaveLength(3);
    // Success by reason.
    expect(value(all, "vllm:request_success_total", { engine: "0", finished_reason: "length" })).toBe(2);
    expect(value(all, "vllm:request_success_total", { engine: "0", finished_reason: "stop" })).toBe(0);
    expect(value(all, "vllm:request_success_total", { engine: "1", finished_reason: "length" })).toBe(1);
    expect(value(all, "vllm:request_success_total", { engine: "1", finished_reason: "stop" })).toBe(1);
    // Gauges follow the engines' latest reported counts (engine 1 serves 7 requests of other frontends).
    expect(value(all, "vllm:num_requests_running", { engine: "0" })).toBe(0);
    expect(value(all, "vllm:num_requests_waiting", { engine: "0" })).toBe(0);
    expect(value(all, "vllm:num_requests_waiting", { engine: "1" })).toBe(7);
    expect(value(all, "vllm:num_requests_waiting_by_reason", { engine: "1", reason: "capacity" })).toBe(7);
    expect(value(all, "vllm:num_requests_waiting_by_reason", { engine: "1", reason: "deferred" })).toBe(0);
    expect(value(all, "vllm:kv_cache_usage_perc", { engine: "1" })).toBe(0);
    // Buckets as vLLM defines them.
    const le = (name: string) =>
      all
        .filter((s) => s.name === `${name}_bucket` && s.labels.engine === "0")
        .map((s) => (s.labels.le === "+Inf" ? Infinity : Number(s.labels.le)));
    expect(le("vllm:time_to_first_token_seconds")).toEqual([...TIME_TO_FIRST_TOKEN_BUCKETS, Infinity]);
    expect(le("vllm:e2e_request_latency_seconds")).toEqual([...REQUEST_LATENCY_BUCKETS, Infinity]);
    expect(le("vllm:request_prompt_tokens")).toEqual([
      ...build125Buckets(harness!.client.maxModelLen),
      Infinity,
    ]);
    expect(le("vllm:iteration_tokens_total")).toEqual([
      1,
      8,
      16,
      32,
      64,
      128,
      256,
      512,
      1024,
      2048,
      4096,
      8192,
      16384,
      Infinity,
    ]);
  });

  it("does not count a client abort as a finished request (vLLM records no finish stats for it)", async () => {
    harness = await connectToMockEngine({ logStats: true, stepMs: 10 });
    const { client } = harness;
    metrics = instrument(client);
    const stream = await client.call({
      requestId: "x",
      promptTokenIds: [1, 2],
      samplingParams: { maxTokens: 1000 },
    });
    await stream.next();
    await client.abort("x");
    await drain(stream);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const all = samples(await metrics.registry.metrics());
    expect(value(all, "vllm:request_success_total", { engine: "0", finished_reason: "abort" })).toBe(0);
    expect(value(all, "vllm:e2e_request_latency_seconds_count", { engine: "0" })).toBe(0);
    expect(value(all, "vllm:time_to_first_token_seconds_count", { engine: "0" })).toBe(1);
    expect(value(all, "vllm:generation_tokens_total", { engine: "0" })).toBeGreaterThanOrEqual(1);
  });

  it("counts a frontend finish (a stop string: stream.finish) once as stop, and its engine abort not at all", async () => {
    harness = await connectToMockEngine({ logStats: true, stepMs: 10 });
    const { client, engine } = harness;
    metrics = instrument(client);
    const stream = await client.call({
      requestId: "s",
      promptTokenIds: [1, 2],
      samplingParams: { maxTokens: 1000 },
    });
    await stream.next();
    await stream.next();
    stream.finish();
    await engine.waitForEvent((e) => e.event === "abort" && (e.requestIds as string[]).includes("s"));
    expect(stream.timings).toMatchObject({ finishReason: "stop", finishedBy: "frontend" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const all = samples(await metrics.registry.metrics());
    expect(value(all, "vllm:request_success_total", { engine: "0", finished_reason: "stop" })).toBe(1);
    expect(value(all, "vllm:request_success_total", { engine: "0", finished_reason: "abort" })).toBe(0);
    expect(value(all, "vllm:e2e_request_latency_seconds_count", { engine: "0" })).toBe(1);
    expect(value(all, "vllm:request_generation_tokens_sum", { engine: "0" })).toBe(
      stream.timings!.numGenerationTokens,
    );
    // The finish adds no iteration: only the two outputs' batches are observed.
    expect(value(all, "vllm:iteration_tokens_total_count", { engine: "0" })).toBe(
      value(all, "vllm:time_to_first_token_seconds_count", { engine: "0" }) +
        value(all, "vllm:inter_token_latency_seconds_count", { engine: "0" }),
    );
  });

  it("vllm:engine_sleep_state follows the client's sleep(level) and wakeUp(), as AsyncLLM records it", async () => {
    harness = await connectToMockEngine({ logStats: true, stepMs: 10 });
    const { client } = harness;
    metrics = instrument(client);
    const state = async () => {
      const all = samples(await metrics!.registry.metrics());
      return Object.fromEntries(
        ["awake", "weights_offloaded", "discard_all"].map((s) => [
          s,
          value(all, "vllm:engine_sleep_state", { engine: "0", sleep_state: s }),
        ]),
      );
    };
    expect(await state()).toEqual({ awake: 1, weights_offloaded: 0, discard_all: 0 });
    await client.sleep(1);
    expect(await state()).toEqual({ awake: 0, weights_offloaded: 1, discard_all: 0 });
    await client.wakeUp();
    expect(await state()).toEqual({ awake: 1, weights_offloaded: 0, discard_all: 0 });
    await client.sleep(2);
    expect(await state()).toEqual({ awake: 0, weights_offloaded: 0, discard_all: 1 });
    await client.wakeUp(["weights"]); // vLLM records awake after any wake_up, whatever the tags
    expect(await state()).toEqual({ awake: 1, weights_offloaded: 0, discard_all: 0 });
  });

  it("writes an exposition a strict Prometheus text-format reader accepts", async () => {
    const { text } = await knownWorkload();
    const families = parseExposition(text);
    const byName = new Map(families.map((f) => [f.name, f]));
    expect(new Set(byName.keys())).toEqual(new Set(Object.keys(EXPECTED_TYPES)));
    for (const [name, type] of Object.entries(EXPECTED_TYPES)) {
      const family = byName.get(name)!;
      expect(family.type, name).toBe(type);
      expect(family.help.length, name).toBeGreaterThan(0);
      expect(family.samples.length, name).toBeGreaterThan(0);
    }
    const ttft = byName.get("vllm:time_to_first_token_seconds")!;
    const count = ttft.samples.find((s) => s.name.endsWith("_count") && s.labels.engine === "0");
    expect(count?.value).toBe(2);
    // The reader is strict: a broken exposition is refused.
    expect(() => parseExposition(`${text}vllm:num_requests_running{engine="0"} 1\n`)).toThrow(
      /contiguous|belong/,
    );
    expect(() => parseExposition(text.replace(/le="\+Inf"/, 'le="+inf"'))).toThrow();
  });
});
