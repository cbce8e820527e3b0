// The summary in `vllm bench serve`'s layout (vllm/benchmarks/serve.py benchmark(): "{:<40} {:<10}" rows under
// 50-column "=" / "-" rules, the metric sections "Time to First Token", "Time per Output Token (excl. 1st
// token)", "Inter-token Latency", "End-to-end Latency"), and the result JSON with vLLM's key names.
import type { BenchMetrics, MetricName, RequestRecord } from "./metrics.js";

const WIDTH = 50;

/** Python's "{s:{c}^{n}}": centred, the odd padding character on the right. */
function rule(title: string, fill: string): string {
  const pad = Math.max(0, WIDTH - title.length);
  const left = Math.floor(pad / 2);
  return `${fill.repeat(left)}${title}${fill.repeat(pad - left)}`;
}

function row(label: string, value: number | string, decimals?: number): string {
  const text = typeof value === "number" && decimals !== undefined ? value.toFixed(decimals) : String(value);
  return `${label.padEnd(40)} ${text.padEnd(10)}`.trimEnd();
}

const SECTIONS: { metric: MetricName; name: string; header: string }[] = [
  { metric: "ttft", name: "TTFT", header: "Time to First Token" },
  { metric: "tpot", name: "TPOT", header: "Time per Output Token (excl. 1st token)" },
  { metric: "itl", name: "ITL", header: "Inter-token Latency" },
  { metric: "e2el", name: "E2EL", header: "End-to-end Latency" },
];

/** vLLM's `str(int(p)) if int(p) == p else str(p)`: "99", "99.9". */
function percentileWord(p: number): string {
  return String(p);
}

export interface SummaryConfig {
  maxConcurrency: number | null;
  requestRate: number;
  durationS: number;
  selectedMetrics: readonly MetricName[];
}

export function formatSummary(m: BenchMetrics, config: SummaryConfig): string {
  const lines = [rule(" Serving Benchmark Result ", "=")];
  lines.push(row("Successful requests:", m.completed));
  lines.push(row("Failed requests:", m.failed));
  if (config.maxConcurrency !== null) lines.push(row("Maximum request concurrency:", config.maxConcurrency));
  if (config.requestRate !== Number.POSITIVE_INFINITY) {
    lines.push(row("Request rate configured (RPS):", config.requestRate, 2));
  }
  lines.push(row("Benchmark duration (s):", config.durationS, 2));
  lines.push(row("Total input tokens:", m.totalInput));
  lines.push(row("Total generated tokens:", m.totalOutput));
  lines.push(row("Request throughput (req/s):", m.requestThroughput, 2));
  lines.push(row("Output token throughput (tok/s):", m.outputThroughput, 2));
  lines.push(row("Peak output token throughput (tok/s):", m.maxOutputTokensPerS, 2));
  lines.push(row("Peak concurrent requests:", m.maxConcurrentRequests, 2));
  lines.push(row("Total token throughput (tok/s):", m.totalTokenThroughput, 2));
  for (const section of SECTIONS) {
    if (!config.selectedMetrics.includes(section.metric)) continue;
    const s = m.stats[section.metric];
    lines.push(rule(section.header, "-"));
    lines.push(row(`Mean ${section.name} (ms):`, s.mean, 2));
    lines.push(row(`Median ${section.name} (ms):`, s.median, 2));
    for (const [p, value] of s.percentiles)
      lines.push(row(`P${percentileWord(p)} ${section.name} (ms):`, value, 2));
  }
  lines.push("=".repeat(WIDTH));
  return lines.join("\n");
}

/** Every figure, the per-request lists and the config, with the key names of vLLM's result JSON. */
export function resultJson(
  m: BenchMetrics,
  records: readonly RequestRecord[],
  durationS: number,
  config: Record<string, unknown>,
  selectedMetrics: readonly MetricName[],
): Record<string, unknown> {
  const result: Record<string, unknown> = {
    ...config,
    duration: durationS,
    completed: m.completed,
    failed: m.failed,
    total_input_tokens: m.totalInput,
    total_output_tokens: m.totalOutput,
    request_throughput: m.requestThroughput,
    output_throughput: m.outputThroughput,
    total_token_throughput: m.totalTokenThroughput,
    max_output_tokens_per_s: m.maxOutputTokensPerS,
    max_concurrent_requests: m.maxConcurrentRequests,
  };
  for (const metric of selectedMetrics) {
    const s = m.stats[metric];
    result[`mean_${metric}_ms`] = s.mean;
    result[`median_${metric}_ms`] = s.median;
    result[`std_${metric}_ms`] = s.std;
    for (const [p, value] of s.percentiles) result[`p${percentileWord(p)}_${metric}_ms`] = value;
  }
  Object.assign(result, {
    input_lens: records.map((r) => r.promptLen),
    output_lens: records.map((r) => (r.success ? r.outputTokens : 0)),
    ttfts: records.map((r) => r.ttft),
    itls: records.map((r) => r.itl),
    start_times: records.map((r) => r.startTime),
    errors: records.map((r) => r.error),
  });
  return result;
}
