// Several servers on one connection (`serve --api-server-count`): each instruments its own client, and
// aggregateMetrics combines their registries: what each counted of its own requests is summed, what follows
// the engines' SchedulerStats (which every attached client receives) is taken once, not N times.
import { EngineCoreClient } from "@vllm-engine-core/client";
import { afterEach, describe, expect, it } from "vitest";
import { aggregateMetrics, type Instrumentation, instrument, type MetricsSnapshot } from "../src/index.js";
import { connectToMockEngine, drain, type Harness, type Sample, samples, until } from "./helpers.js";

let harness: Harness | undefined;
const instrumented: Instrumentation[] = [];
afterEach(async () => {
  for (const m of instrumented.splice(0)) m.close();
  await harness?.close();
  harness = undefined;
});

const value = (all: Sample[], name: string, labels: Record<string, string>) =>
  all
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

describe("aggregateMetrics", () => {
  it("sums each server's requests and takes the engines' state once", async () => {
    harness = await connectToMockEngine({ logStats: true, stepMs: 5 });
    const first = harness.client;
    const second = await EngineCoreClient.attach(first.handle);
    try {
      const [a, b] = [instrument(first), instrument(second)];
      instrumented.push(a, b);
      const run = async (client: EngineCoreClient, requestId: string, maxTokens: number) =>
        drain(await client.call({ requestId, promptTokenIds: [1, 2, 3], samplingParams: { maxTokens } }));
      await Promise.all([run(first, "a", 4), run(first, "b", 5), run(second, "c", 6)]);
      await until(() => first.schedulerStats(0)?.numRunningReqs === 0, "the engine idle");
      await new Promise((resolve) => setTimeout(resolve, 50));

      const own = [samples(await a.registry.metrics()), samples(await b.registry.metrics())];
      const snapshots = (await Promise.all(
        [a, b].map((m) => m.registry.getMetricsAsJSON()),
      )) as MetricsSnapshot[];
      // The snapshots cross threads in the CLI: they must survive a structured clone.
      const all = samples(await aggregateMetrics(structuredClone(snapshots)));
      const engine = { engine: "0" };
      const length = { ...engine, finished_reason: "length" };

      // Each server's own requests, summed.
      expect(own.map((s) => value(s, "vllm:request_success_total", length))).toEqual([2, 1]);
      expect(value(all, "vllm:request_success_total", length)).toBe(3);
      expect(value(all, "vllm:generation_tokens_total", engine)).toBe(15);
      expect(value(all, "vllm:e2e_request_latency_seconds_count", engine)).toBe(3);
      expect(value(all, "vllm:request_generation_tokens_sum", engine)).toBe(15);

      // The engines' state: both registries saw the same SchedulerStats; once, not twice.
      const queries = own.map((s) => value(s, "vllm:prefix_cache_queries_total", engine));
      expect(queries[0]).toBeGreaterThan(0);
      expect(value(all, "vllm:prefix_cache_queries_total", engine)).toBe(Math.max(...queries));
      expect(value(all, "vllm:cache_config_info", engine)).toBe(1);
      expect(value(all, "vllm:engine_sleep_state", { ...engine, sleep_state: "awake" })).toBe(1);
    } finally {
      await second.detach();
    }
  });
});
