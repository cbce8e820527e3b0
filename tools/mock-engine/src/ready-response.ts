// The EngineCoreReadyResponse each engine registers with: plausible values for a small single-GPU model,
// overridable per field. data_parallel_rank is the engine index, as in `_make_ready_response`; dense DP
// engines report data_parallel_size 1 (vLLM resets it for non-MoE ranks).
//
// The engine's configuration has every field; what it *reports* is its vLLM version's dataclass
// (EngineCoreProc.process_input_sockets builds it from the config): 4 keys in v0.22.1, 6 in v0.23.0
// (+ block_size, vllm_version), 10 in v0.24.0/v0.25.1 (+ world_size, data_parallel_size,
// kv_cache_size_tokens, kv_cache_max_concurrency), 18 at the pin (_make_ready_response).
import type { EngineCoreReadyResponse } from "@vllm-engine-core/protocol";
import type { ReadyResponseOverrides } from "./options.js";
import { type MockVllmVersion, reportedVllmVersion } from "./versions.js";

/** The engine's configuration, every field of the pinned revision's registration. */
export type MockEngineConfig = Required<EngineCoreReadyResponse>;
/** What the engine sends: its version's keys only. */
export type MockReadyResponse = EngineCoreReadyResponse;

/**
 * The registration keys (camelCase) each version's EngineCoreReadyResponse declares, from
 * vllm/v1/engine/__init__.py at v0.22.1, v0.23.0, v0.24.0 / v0.25.1 and c67fe497. Written out here
 * (not taken from the codec) so the mock's frames come from vLLM's code, not from the client's tables.
 */
const V022_KEYS = ["maxModelLen", "numGpuBlocks", "dpStatsAddress", "dtype"] as const;
const V023_KEYS = [...V022_KEYS, "blockSize", "vllmVersion"] as const;
const V024_KEYS = [
  ...V023_KEYS,
  "worldSize",
  "dataParallelSize",
  "kvCacheSizeTokens",
  "kvCacheMaxConcurrency",
] as const;
const MAIN_KEYS = [
  ...V024_KEYS,
  "tensorParallelSize",
  "pipelineParallelSize",
  "decodeContextParallelSize",
  "dataParallelRank",
  "maxNumSeqs",
  "maxNumBatchedTokens",
  "instanceId",
  "kvEventsConfig",
] as const;

export const REGISTRATION_KEYS: Readonly<Record<MockVllmVersion, readonly (keyof MockEngineConfig)[]>> = {
  "0.22": V022_KEYS,
  "0.23": V023_KEYS,
  "0.24": V024_KEYS,
  "0.25": V024_KEYS,
  main: MAIN_KEYS,
};

export function makeEngineConfig(
  engineIndex: number,
  overrides: ReadyResponseOverrides,
  version: MockVllmVersion = "main",
): MockEngineConfig {
  const numGpuBlocks = overrides.numGpuBlocks ?? 8192;
  const blockSize = overrides.blockSize ?? 16;
  const maxModelLen = overrides.maxModelLen ?? 4096;
  const base: MockEngineConfig = {
    maxModelLen,
    numGpuBlocks,
    blockSize,
    dpStatsAddress: null,
    dtype: "bfloat16",
    vllmVersion: reportedVllmVersion(version) ?? "0.22.1",
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

/** The registration an engine of `version` sends: the configuration restricted to that version's keys. */
export function makeReadyResponse(config: MockEngineConfig, version: MockVllmVersion): MockReadyResponse {
  const out: Record<string, unknown> = {};
  for (const key of REGISTRATION_KEYS[version]) out[key] = config[key];
  return out as unknown as MockReadyResponse;
}
