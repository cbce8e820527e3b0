// Several registries as one exposition: the metrics of several servers that share one connection (the CLI's
// `serve --api-server-count`), as vLLM's API servers share theirs through prometheus_client's multiprocess
// mode. prom-client's own AggregatorRegistry does the arithmetic: a series counted from one server's
// requests is summed, an engine-state series (the same in every registry, see instrument.ts) taken once.
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, Registry } from "prom-client";

/** One registry's metrics as `registry.getMetricsAsJSON()` gives them (structured-cloneable). */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** The Prometheus text of several registries' snapshots, combined by each metric's aggregator. */
export async function aggregateMetrics(snapshots: readonly MetricsSnapshot[]): Promise<string> {
  return AggregatorRegistry.aggregate(snapshots as MetricsSnapshot[]).metrics();
}

/** The content type of aggregateMetrics' text (Prometheus text format 0.0.4, as a registry's). */
export const METRICS_CONTENT_TYPE: string = Registry.PROMETHEUS_CONTENT_TYPE;
