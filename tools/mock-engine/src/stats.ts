// The stats vLLM's scheduler attaches to its outputs, in the layout of the version the mock plays.
//
// - PrefillStats (vllm/v1/metrics/stats.py): every Request starts with one (vllm/v1/request.py
//   Request.__init__, unconditionally, v0.22.1–main); Scheduler.schedule fills it in with
//   PrefillStats.set when the request is first scheduled, and Scheduler.update_from_output moves it
//   (take_prefill_stats) onto the request's first EngineCoreOutput. At main it also gets
//   num_cache_creation_tokens from PrefillStats.finalize(kv_cache_manager.estimate_cached_tokens(...))
//   (a287eb16, #48535): the prompt tokens in full blocks the prefill wrote to the prefix cache.
// - SchedulerStats: Scheduler.make_stats, only with log_stats, attached by update_from_output to one
//   client's EngineCoreOutputs per step ("Return stats to only one of the front-ends"). The dataclass
//   encodes every field: 15 keys up to v0.25, 16 at main (iteration_details, 5a65ba5f #46647; None
//   unless observability_config.enable_logging_iteration_details).
//
// The mock has no spec decoding, KV connector, LoRA or CUDA graph stats: those
// fields carry their defaults (None / empty), as from an engine with none of them configured.
import type { EngineCoreOutputInit, SchedulerStatsInit } from "@vllm-engine-core/protocol";
import { type MockVllmVersion, versionHasField } from "./versions.js";

export type MockPrefillStats = NonNullable<EngineCoreOutputInit["prefillStats"]>;

/** What one engine step did, as make_stats reads it off the scheduler and the KV cache manager. */
export interface StepStatsInput {
  numRunning: number;
  numWaiting: number;
  /** KV blocks held by running requests / num_gpu_blocks (BlockPool.get_usage). */
  kvCacheUsage: number;
  /** Requests admitted this step that looked up the prefix cache, and their prompt tokens (PrefixCacheStats.record). */
  newRequests: number;
  newRequestTokens: number;
  /** Their prefix-cache hits, in tokens. */
  newRequestHits?: number;
}

/** Scheduler.make_stats in `version`'s SchedulerStats layout. */
export function makeSchedulerStats(input: StepStatsInput, version: MockVllmVersion): SchedulerStatsInit {
  const stats: SchedulerStatsInit = {
    numRunningReqs: input.numRunning,
    numWaitingReqs: input.numWaiting,
    numSkippedWaitingReqs: 0,
    // step_counter / current_wave are set by DP engines only (DPEngineCoreProc).
    stepCounter: 0,
    currentWave: 0,
    kvCacheUsage: input.kvCacheUsage,
    prefixCacheStats: {
      reset: false,
      requests: input.newRequests,
      queries: input.newRequestTokens,
      hits: input.newRequestHits ?? 0,
      preemptedRequests: 0,
      preemptedQueries: 0,
      preemptedHits: 0,
    },
    connectorPrefixCacheStats: null,
    kvCacheEvictionEvents: [],
    specDecodingStats: null,
    kvConnectorStats: null,
    waitingLoraAdapters: {},
    runningLoraAdapters: {},
    cudagraphStats: null,
    perfStats: null,
  };
  if (versionHasField(version, "SchedulerStats", "iteration_details")) stats.iterationDetails = null;
  return stats;
}

/** A request's PrefillStats on its first output (one-step prefill; `numCachedTokens` from the prefix cache). */
export function makePrefillStats(
  numPromptTokens: number,
  blockSize: number,
  version: MockVllmVersion,
  numCachedTokens = 0,
): MockPrefillStats {
  const stats: MockPrefillStats = {
    numPromptTokens,
    numComputedTokens: numPromptTokens - numCachedTokens,
    numCachedTokens,
    numLocalCachedTokens: numCachedTokens,
    numExternalCachedTokens: 0,
  };
  if (versionHasField(version, "PrefillStats", "num_cache_creation_tokens")) {
    // finalize: max(0, min(cached, num_prompt_tokens) - num_cached_tokens), cached = full blocks.
    const cached = Math.floor(numPromptTokens / blockSize) * blockSize;
    stats.numCacheCreationTokens = Math.max(0, Math.min(cached, numPromptTokens) - numCachedTokens);
  }
  return stats;
}
