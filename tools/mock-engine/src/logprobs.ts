// The mock's deterministic "model runner" for logprobs: the tensors vLLM's V1 GPUModelRunner puts in
// `EngineCoreOutput.new_logprobs` (sample logprobs) and `new_prompt_logprobs_tensors` (prompt logprobs),
// with vLLM's dtypes and shapes, filled from a fake distribution that a test can recompute exactly.
//
// The fake distribution at one position (a request, "sample" or "prompt", a position index) is a
// permutation of the whole vocabulary: rank r (1-based) holds token (base + (r - 1) * STRIDE) mod VOCAB,
// with logprob -(offset + (r - 1) / 2). Both are exact in float32 and strictly decreasing in r, so the
// top-K columns, the rank of any token and its logprob all follow from (base, offset) alone, and a row
// cut to fewer columns is a prefix of a wider one (vLLM's batch-wide width, see MockScheduler).
import type { Tensor } from "@vllm-engine-core/protocol";
import { MOCK_VOCAB_SIZE } from "./tokens.js";

/** Prime, coprime with MOCK_VOCAB_SIZE (2^8 * 5^3): rank → token is a bijection on the vocabulary. */
const STRIDE = 7919;

function modInverse(a: number, m: number): number {
  let [r0, r1] = [a % m, m];
  let [s0, s1] = [1, 0];
  while (r1 !== 0) {
    const q = Math.floor(r0 / r1);
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return ((s0 % m) + m) % m;
}
const STRIDE_INVERSE = modInverse(STRIDE, MOCK_VOCAB_SIZE);

/**
 * Raised where vLLM's model runner raises inside a step (torch.topk with k > vocab, a gather at an
 * out-of-vocab index): an exception in EngineCore.step is fatal for the engine (ENGINE_CORE_DEAD).
 */
export class MockModelError extends Error {
  override readonly name = "MockModelError";
  readonly code = "MOCK_MODEL";
}

export type LogprobsKind = "sample" | "prompt";

/** One position of a LogprobsLists / LogprobsTensors: column 0 is the sampled (or prompt) token. */
export interface LogprobsRow {
  tokenIds: number[];
  logprobs: number[];
  /** Rank (>= 1) of the column-0 token in the full distribution. */
  rank: number;
}

interface Distribution {
  base: number;
  offset: number;
}

function distribution(requestId: string, kind: LogprobsKind, position: number): Distribution {
  let h = 0x811c9dc5;
  const mix = (byte: number) => {
    h ^= byte & 0xff;
    h = Math.imul(h, 0x01000193) >>> 0;
  };
  for (const byte of new TextEncoder().encode(requestId)) mix(byte);
  mix(kind === "sample" ? 0x53 : 0x50);
  for (let shift = 0; shift < 32; shift += 8) mix(position >>> shift);
  // offset in (0, 4] in steps of 1/256: exact in float32 even at rank 32000, and never -0.
  return { base: h % MOCK_VOCAB_SIZE, offset: ((h >>> 16) % 1024) / 256 + 1 / 256 };
}

function tokenAtRank(d: Distribution, rank: number): number {
  return (d.base + (rank - 1) * STRIDE) % MOCK_VOCAB_SIZE;
}

function rankOfToken(d: Distribution, token: number): number {
  const delta = (((token - d.base) % MOCK_VOCAB_SIZE) + MOCK_VOCAB_SIZE) % MOCK_VOCAB_SIZE;
  return ((delta * STRIDE_INVERSE) % MOCK_VOCAB_SIZE) + 1;
}

function logprobAtRank(d: Distribution, rank: number): number {
  return Math.fround(-(d.offset + (rank - 1) / 2));
}

/**
 * `logprobs` / `prompt_logprobs` as the model runner counts them: -1 is the whole vocabulary
 * (gpu_input_batch.py `add_request`, gpu_model_runner.py `_update_states`).
 */
export function resolveNumLogprobs(requested: number): number {
  return requested === -1 ? MOCK_VOCAB_SIZE : requested;
}

function checkTopK(numTopLogprobs: number): void {
  // torch.topk(logprobs, k) in Sampler.gather_logprobs: k beyond the vocabulary raises.
  if (numTopLogprobs > MOCK_VOCAB_SIZE) throw new MockModelError("selected index k out of range");
}

function checkTarget(token: number): void {
  // logprobs.gather(-1, token_ids) in Sampler.gather_logprobs: an out-of-vocab prompt token raises.
  if (!(token >= 0 && token < MOCK_VOCAB_SIZE)) {
    throw new MockModelError(`index ${token} is out of bounds for dimension 1 with size ${MOCK_VOCAB_SIZE}`);
  }
}

/**
 * The row the mock engine sends for one position: `target` in column 0 with its rank, then the
 * `numTopLogprobs` most likely tokens (Sampler.gather_logprobs layout). For sample logprobs `position`
 * is the index of the generated token (0 = first output token) and `target` the token itself; for
 * prompt logprobs `position` i scores prompt token i + 1.
 */
export function expectedLogprobsRow(
  requestId: string,
  kind: LogprobsKind,
  position: number,
  target: number,
  numTopLogprobs: number,
): LogprobsRow {
  const d = distribution(requestId, kind, position);
  const rank = rankOfToken(d, target);
  const tokenIds = [target];
  const logprobs = [logprobAtRank(d, rank)];
  for (let r = 1; r <= numTopLogprobs; r++) {
    tokenIds.push(tokenAtRank(d, r));
    logprobs.push(logprobAtRank(d, r));
  }
  return { tokenIds, logprobs, rank };
}

function fillRows(
  requestId: string,
  kind: LogprobsKind,
  firstPosition: number,
  targets: readonly number[],
  numTopLogprobs: number,
): { ids: Int32Array; lps: Float32Array; ranks: number[] } {
  const width = numTopLogprobs + 1;
  const ids = new Int32Array(targets.length * width);
  const lps = new Float32Array(targets.length * width);
  const ranks: number[] = [];
  targets.forEach((target, row) => {
    const r = expectedLogprobsRow(requestId, kind, firstPosition + row, target, numTopLogprobs);
    ids.set(r.tokenIds, row * width);
    lps.set(r.logprobs, row * width);
    ranks.push(r.rank);
  });
  return { ids, lps, ranks };
}

/** `new_logprobs`: a LogprobsLists of numpy arrays (LogprobsTensors.tolists()). */
export interface MockSampleLogprobs {
  logprobTokenIds: Tensor;
  logprobs: Tensor;
  sampledTokenRanks: Tensor;
}

/** `new_prompt_logprobs_tensors`: a LogprobsTensors of CPU torch tensors. */
export interface MockPromptLogprobs {
  logprobTokenIds: Tensor;
  logprobs: Tensor;
  selectedTokenRanks: Tensor;
}

/**
 * Sample logprobs for `tokens`, generated at output positions firstPosition, firstPosition + 1, ...
 * `numTopLogprobs` is the batch's max_num_logprobs (already resolved, see resolveNumLogprobs).
 * dtypes as the V1 sampler makes them and numpy names them: ids int32 (`indices.to(torch.int32)`),
 * logprobs float32 (log_softmax in float32), ranks int64 (`batched_count_greater_than` is a bool sum).
 */
export function sampleLogprobs(
  requestId: string,
  firstPosition: number,
  tokens: readonly number[],
  numTopLogprobs: number,
): MockSampleLogprobs {
  checkTopK(numTopLogprobs);
  const { ids, lps, ranks } = fillRows(requestId, "sample", firstPosition, tokens, numTopLogprobs);
  const shape = [tokens.length, numTopLogprobs + 1];
  return {
    logprobTokenIds: { dtype: "<i4", shape, data: ids },
    logprobs: { dtype: "<f4", shape: [...shape], data: lps },
    sampledTokenRanks: { dtype: "<i8", shape: [tokens.length], data: BigInt64Array.from(ranks, BigInt) },
  };
}

/**
 * Prompt logprobs for a whole prompt, as gpu_model_runner.py `_get_prompt_logprobs_dict` returns them
 * once prefill completes: one row per prompt token after the first (row i scores token i + 1), width
 * num_prompt_logprobs + 1 for this request alone; `LogprobsTensors.empty_cpu` makes them int32 / float32
 * / int32 torch tensors. A one-token prompt gives shape [0, K + 1].
 */
export function promptLogprobs(
  requestId: string,
  promptTokenIds: readonly number[],
  numTopLogprobs: number,
): MockPromptLogprobs {
  checkTopK(numTopLogprobs);
  const targets = promptTokenIds.slice(1);
  for (const token of targets) checkTarget(token);
  const { ids, lps, ranks } = fillRows(requestId, "prompt", 0, targets, numTopLogprobs);
  const shape = [targets.length, numTopLogprobs + 1];
  return {
    logprobTokenIds: { dtype: "int32", shape, data: ids },
    logprobs: { dtype: "float32", shape: [...shape], data: lps },
    selectedTokenRanks: { dtype: "int32", shape: [targets.length], data: Int32Array.from(ranks) },
  };
}
