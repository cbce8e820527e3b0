// The EngineCoreReadyResponse each engine registers with: plausible values for a small single-GPU model,
// overridable per field. data_parallel_rank is the engine index, as in `_make_ready_response`; dense DP
// engines report data_parallel_size 1 (vLLM resets it for non-MoE ranks).
import type { EngineCoreReadyResponse } from "@vllm-engine-core/protocol";
import type { ReadyResponseOverrides } from "./options.js";

/** The mock plays the pinned revision, which reports every field. */
export type MockReadyResponse = Required<EngineCoreReadyResponse>;

export const MOCK_VLLM_VERSION = "0.26.0.dev0+mock";

export function makeReadyResponse(engineIndex: number, overrides: ReadyResponseOverrides): MockReadyResponse {
  const numGpuBlocks = overrides.numGpuBlocks ?? 8192;
  const blockSize = overrides.blockSize ?? 16;
  const maxModelLen = overrides.maxModelLen ?? 4096;
  const base: MockReadyResponse = {
    maxModelLen,
    numGpuBlocks,
    blockSize,
    dpStatsAddress: null,
    dtype: "bfloat16",
    vllmVersion: MOCK_VLLM_VERSION,
    worldSize: 1,
    dataParallelSize: 1,
    tensorParallelSize: 1,
    pipelineParallelSize: 1,
    decodeContextParallelSize: 1,
    dataParallelRank: engineIndex,
    maxNumSeqs: 256,
    maxNumBatchedTokens: 8192,
    instanceId: `mock-${process.pid}`,
    kvCacheSizeTokens: numGpuBlocks * blockSize,
    kvCacheMaxConcurrency: (numGpuBlocks * blockSize) / maxModelLen,
    kvEventsConfig: null,
  };
  const merged = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
  }
  return merged;
}
