// GET /metrics: vLLM's Prometheus frontend metrics (@vllm-engine-core/metrics), as vLLM's API server serves
// them (vllm/entrypoints/openai/api_server.py mounts prometheus_client's ASGI app at /metrics), labelled
// with the served model name as vLLM's `model_name`.
import { instrument, type MetricsClient } from "@vllm-engine-core/metrics";
import type { FastifyInstance } from "fastify";

function isMetricsClient(client: unknown): client is MetricsClient {
  const c = client as Partial<MetricsClient>;
  return typeof c.onSchedulerStats === "function" && typeof c.observeOutputs === "function";
}

/** Registers GET /metrics when the client can be instrumented (a test double may not be). */
export function metricsRoute(app: FastifyInstance, client: unknown, servedModelName: string): void {
  if (!isMetricsClient(client)) return;
  const metrics = instrument(client, { labels: { model_name: servedModelName } });
  app.get("/metrics", async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.header("content-type", metrics.registry.contentType).send(text);
  });
  app.addHook("onClose", async () => metrics.close());
}
