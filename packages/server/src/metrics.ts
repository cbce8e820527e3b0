// GET /metrics: vLLM's Prometheus frontend metrics (@vllm-engine-core/metrics), as vLLM's API server serves
// them (vllm/entrypoints/openai/api_server.py mounts prometheus_client's ASGI app at /metrics), labelled
// with the served model name as vLLM's `model_name`.
import {
  instrument,
  METRICS_CONTENT_TYPE,
  type MetricsClient,
  type MetricsSnapshot,
} from "@vllm-engine-core/metrics";
import type { FastifyInstance } from "fastify";

/** Several servers on one connection (ServerOptions.metricsAcrossServers). */
export interface MetricsAcrossServers {
  /**
   * What GET /metrics answers instead of this server's own metrics: every server's, combined
   * (`aggregateMetrics` of each one's `app.metricsSnapshot()`).
   */
  exposition(): Promise<string>;
}

function isMetricsClient(client: unknown): client is MetricsClient {
  const c = client as Partial<MetricsClient>;
  return typeof c.onSchedulerStats === "function" && typeof c.observeOutputs === "function";
}

/**
 * Registers GET /metrics when the client can be instrumented (a test double may not be); returns this
 * server's own metrics as a snapshot function (undefined without metrics).
 */
export function metricsRoute(
  app: FastifyInstance,
  client: unknown,
  servedModelName: string,
  across: MetricsAcrossServers | undefined,
): (() => Promise<MetricsSnapshot>) | undefined {
  if (!isMetricsClient(client)) return undefined;
  const metrics = instrument(client, { labels: { model_name: servedModelName } });
  app.get("/metrics", async (_request, reply) => {
    const text = across === undefined ? await metrics.registry.metrics() : await across.exposition();
    return reply.header("content-type", METRICS_CONTENT_TYPE).send(text);
  });
  app.addHook("onClose", async () => metrics.close());
  return () => metrics.registry.getMetricsAsJSON() as Promise<MetricsSnapshot>;
}
