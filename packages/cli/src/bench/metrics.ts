// The figures of `vllm bench serve` (vllm/benchmarks/serve.py calculate_metrics), from per-request records:
// TTFT = first output with tokens − send; ITL = gap between consecutive outputs; E2E = last output − send;
// TPOT = (E2E − TTFT) / (output tokens − 1) for requests with more than one token; throughputs over the
// benchmark duration; peak output tokens/s and peak concurrency in one-second buckets. Statistics as numpy's
// mean, std (population), median and percentile (linear interpolation).

export interface RequestRecord {
  promptLen: number;
  expectedOutputLen: number;
  success: boolean;
  error: string;
  /** Send time, seconds on the benchmark's clock (performance.now() / 1000). */
  startTime: number;
  ttft: number;
  itl: number[];
  latency: number;
  outputTokens: number;
}

export type MetricName = "ttft" | "tpot" | "itl" | "e2el";
export const METRIC_NAMES: readonly MetricName[] = ["ttft", "tpot", "itl", "e2el"];

export interface MetricStats {
  mean: number;
  median: number;
  std: number;
  percentiles: [number, number][];
}

export interface BenchMetrics {
  completed: number;
  failed: number;
  totalInput: number;
  totalOutput: number;
  requestThroughput: number;
  outputThroughput: number;
  totalTokenThroughput: number;
  maxOutputTokensPerS: number;
  maxConcurrentRequests: number;
  /** In milliseconds. */
  stats: Record<MetricName, MetricStats>;
}

export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export function std(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const m = mean(xs);
  return Math.sqrt(mean(xs.map((x) => (x - m) ** 2)));
}

/** numpy.percentile with the default linear method; 0 for an empty list (vLLM passes `xs or 0`). */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

function statsMs(xs: readonly number[], percentiles: readonly number[]): MetricStats {
  return {
    mean: mean(xs) * 1000,
    median: percentile(xs, 50) * 1000,
    std: std(xs) * 1000,
    percentiles: percentiles.map((p) => [p, percentile(xs, p) * 1000]),
  };
}

export function calculateMetrics(
  records: readonly RequestRecord[],
  durationS: number,
  percentiles: readonly number[],
): BenchMetrics {
  const ok = records.filter((r) => r.success);
  const ttfts = ok.map((r) => r.ttft);
  const e2els = ok.map((r) => r.latency);
  const itls = ok.flatMap((r) => r.itl);
  const tpots = ok.filter((r) => r.outputTokens > 1).map((r) => (r.latency - r.ttft) / (r.outputTokens - 1));
  const totalInput = ok.reduce((a, r) => a + r.promptLen, 0);
  const totalOutput = ok.reduce((a, r) => a + r.outputTokens, 0);

  // Peak output tokens/s and concurrency: one-second buckets from the first send to the last finish.
  let maxOutputTokensPerS = 0;
  let maxConcurrentRequests = 0;
  if (ok.length > 0) {
    const t0 = Math.min(...ok.map((r) => r.startTime));
    const t1 = Math.max(...ok.map((r) => r.startTime + r.latency));
    const buckets = Math.ceil(t1 - t0) + 1;
    const tokens = new Array<number>(buckets).fill(0);
    const concurrent = new Array<number>(buckets).fill(0);
    for (const r of ok) {
      // One timestamp per output chunk, as vLLM counts them (start + ttft, then + each ITL).
      let t = r.startTime + r.ttft;
      const times = [t];
      for (const gap of r.itl) {
        t += gap;
        times.push(t);
      }
      for (const time of times) {
        const b = Math.floor(time - t0);
        if (b >= 0 && b < buckets) tokens[b]!++;
      }
      const first = Math.floor(r.startTime - t0);
      const last = Math.floor(r.startTime + r.latency - t0);
      for (let s = first; s <= last; s++) concurrent[s]!++;
    }
    maxOutputTokensPerS = Math.max(...tokens);
    maxConcurrentRequests = Math.max(...concurrent);
  }

  return {
    completed: ok.length,
    failed: records.length - ok.length,
    totalInput,
    totalOutput,
    requestThroughput: ok.length / durationS,
    outputThroughput: totalOutput / durationS,
    totalTokenThroughput: (totalInput + totalOutput) / durationS,
    maxOutputTokensPerS,
    maxConcurrentRequests,
    stats: {
      ttft: statsMs(ttfts, percentiles),
      tpot: statsMs(tpots, percentiles),
      itl: statsMs(itls, percentiles),
      e2el: statsMs(e2els, percentiles),
    },
  };
}
