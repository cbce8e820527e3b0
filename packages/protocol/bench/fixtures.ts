// Realistic EngineCoreOutputs batches and a typical chat request, built with the package's own encoder.
import type { EngineCoreOutputsInit, EngineCoreRequest } from "../src/index.js";

/** Deterministic PRNG so every run measures the same bytes. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const hex = (rand: () => number, n: number) => {
  let s = "";
  for (let i = 0; i < n; i++) s += Math.floor(rand() * 16).toString(16);
  return s;
};

/** A step of `count` running requests: 1–4 new tokens each, ~3% finished (LENGTH or STOP). */
export function outputsBatch(count: number, seed = 1): EngineCoreOutputsInit {
  const rand = mulberry32(seed);
  const outputs = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(rand() * 4);
    const tokens = Array.from({ length: n }, () => Math.floor(rand() * 151_000));
    const finished = rand() < 0.03;
    outputs.push({
      // Python frontend ids: "chatcmpl-<32 hex>-<8 hex>"
      requestId: `chatcmpl-${hex(rand, 32)}-${hex(rand, 8)}`,
      newTokenIds: tokens,
      finishReason: finished ? (rand() < 0.5 ? 0 : 1) : null,
      stopReason: finished && rand() < 0.3 ? 151643 : null,
    } as const);
  }
  return { engineIndex: 0, outputs, timestamp: 12345.678 };
}

export function chatRequest(i: number): EngineCoreRequest {
  return {
    requestId: `chatcmpl-0123456789abcdef0123456789abcdef-${i.toString(16).padStart(8, "0")}`,
    promptTokenIds: Array.from({ length: 180 }, (_, k) => (k * 7919 + i) % 151_000),
    mmFeatures: null,
    samplingParams: {
      presencePenalty: 0,
      frequencyPenalty: 0,
      repetitionPenalty: 1,
      temperature: 0.7,
      topP: 0.9,
      minP: 0,
      stop: [],
      stopTokenIds: [151643],
      maxTokens: 512,
      outputKind: 1,
      skipClone: true,
      eosTokenId: 151645,
      allStopTokenIds: [151643, 151645],
      badWords: [],
      skipReadingPrefixCache: false,
    },
    poolingParams: null,
    arrivalTime: 1754000000.25,
    loraRequest: null,
    cacheSalt: null,
    dataParallelRank: null,
    externalReqId: "chatcmpl-0123456789abcdef0123456789abcdef",
  };
}

/** `count` outputs of one token with 20 sample logprobs each (inline ext-3 tensors below the aux threshold). */
export function logprobsBatch(count: number): EngineCoreOutputsInit {
  const outputs = [];
  for (let i = 0; i < count; i++) {
    outputs.push({
      requestId: `chatcmpl-${i.toString(16).padStart(32, "0")}-0000abcd`,
      newTokenIds: [i],
      newLogprobs: {
        logprobTokenIds: { dtype: "int32", shape: [1, 21], data: new Int32Array(21).fill(i) },
        logprobs: { dtype: "float32", shape: [1, 21], data: new Float32Array(21).fill(-0.5) },
        sampledTokenRanks: { dtype: "int32", shape: [1], data: new Int32Array(1) },
        cuNumGeneratedTokens: null,
      },
    });
  }
  return { engineIndex: 0, outputs, timestamp: 12345.678 };
}
