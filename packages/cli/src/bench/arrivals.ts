// Request send times of `vllm bench serve` (vllm/benchmarks/serve.py get_request): with rate inf every request
// is sent at once; otherwise the intervals are Gamma(burstiness, 1/(rate·burstiness)) — exponential, i.e. a
// Poisson process, at burstiness 1 — accumulated and rescaled so that the last one lands at exactly
// numRequests / rate (vLLM does this to keep the throughput stable across seeds).
import type { SeededRandom } from "./random.js";

/** Offsets in seconds from the start of the run, one per request. */
export function arrivalOffsets(count: number, rate: number, burstiness: number, rng: SeededRandom): number[] {
  if (rate === Number.POSITIVE_INFINITY) return new Array<number>(count).fill(0);
  const offsets: number[] = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    t += burstiness === Number.POSITIVE_INFINITY ? 1 / rate : rng.gamma(burstiness, 1 / (rate * burstiness));
    offsets.push(t);
  }
  const last = offsets[offsets.length - 1] ?? 0;
  if (last === 0) return offsets;
  const factor = count / rate / last;
  return offsets.map((o) => o * factor);
}
