export { aggregateMetrics, METRICS_CONTENT_TYPE, type MetricsSnapshot } from "./aggregate.js";
export {
  build125Buckets,
  buildBuckets,
  INTER_TOKEN_LATENCY_BUCKETS,
  ITERATION_TOKENS_BUCKETS,
  REQUEST_LATENCY_BUCKETS,
  REQUEST_PARAMS_N_BUCKETS,
  TIME_TO_FIRST_TOKEN_BUCKETS,
} from "./buckets.js";
export {
  type Instrumentation,
  type InstrumentOptions,
  instrument,
  type MetricsClient,
} from "./instrument.js";
