// Requests the probe and the bench send: long-running streams the measurement stops itself.
import type { EngineCoreRequest } from "@vllm-engine-core/protocol";

export function streamRequestIds(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
}

/** The wire request a frontend would send (full EngineCoreRequest, like the client builds it). */
export function wireRequest(requestId: string, maxTokens: number): EngineCoreRequest {
  return {
    requestId,
    promptTokenIds: [1, 2, 3, 4, 5, 6, 7, 8],
    mmFeatures: null,
    samplingParams: {
      maxTokens,
      temperature: 0.7,
      stop: [],
      stopTokenIds: [],
      badWords: [],
      skipReadingPrefixCache: false,
    },
    poolingParams: null,
    arrivalTime: Date.now() / 1000,
    loraRequest: null,
    cacheSalt: null,
    dataParallelRank: null,
  };
}

/** What the product's `client.call()` takes for the same request. */
export function callRequest(requestId: string, maxTokens: number) {
  return {
    requestId,
    promptTokenIds: [1, 2, 3, 4, 5, 6, 7, 8],
    samplingParams: { maxTokens, temperature: 0.7 },
  };
}
