// Histogram buckets copied from vLLM at the pinned revision (c67fe497),
// vllm/v1/metrics/loggers.py PrometheusStatLogger.__init__ (the literal lists) and
// build_buckets / build_1_2_5_buckets (the token-count buckets, which depend on max_model_len).

/** `vllm:iteration_tokens_total`. */
export const ITERATION_TOKENS_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

/** `vllm:request_params_n`. */
export const REQUEST_PARAMS_N_BUCKETS = [1, 2, 5, 10, 20];

/** `vllm:time_to_first_token_seconds`. */
export const TIME_TO_FIRST_TOKEN_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
  80.0, 160.0, 640.0, 2560.0,
];

/** `vllm:inter_token_latency_seconds` and `vllm:request_time_per_output_token_seconds` (same list). */
export const INTER_TOKEN_LATENCY_BUCKETS = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];

/** `request_latency_buckets`: e2e, queue, inference, prefill and decode time. */
export const REQUEST_LATENCY_BUCKETS = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
  960.0, 1920.0, 7680.0,
];

/** build_buckets: mantissas times increasing powers of 10, while the value is <= maxValue. */
export function buildBuckets(mantissas: readonly number[], maxValue: number): number[] {
  const buckets: number[] = [];
  for (let exponent = 0; ; exponent++) {
    for (const m of mantissas) {
      const value = m * 10 ** exponent;
      if (value > maxValue) return buckets;
      buckets.push(value);
    }
  }
}

/** build_1_2_5_buckets(100) → [1, 2, 5, 10, 20, 50, 100]. */
export function build125Buckets(maxValue: number): number[] {
  return buildBuckets([1, 2, 5], maxValue);
}
