// Fill defaults into sparse views (absent key ≡ default, as msgspec does on decode).
import { type SamplingParams, SamplingParamsCodec } from "./sampling.js";

type Defined<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };

/** SamplingParams with every key set (absent keys take vLLM's declared defaults; no __post_init__ logic). */
export type ResolvedSamplingParams = Defined<SamplingParams>;

export function resolveSamplingParams(params: SamplingParams): ResolvedSamplingParams {
  return SamplingParamsCodec.resolve(params as Record<string, unknown>) as ResolvedSamplingParams;
}
