// The random dataset of `vllm bench serve --dataset-name random` at token level
// (vllm/benchmarks/datasets/datasets.py RandomDataset.sample, utils.py get_sampling_params): per request an
// input and output length drawn uniformly from [len·(1−r), len·(1+r)] and a random offset; the prompt is the
// sequence (offset + index + j) mod vocab. There is no tokenizer here, so no special tokens are removed and no
// decode/re-encode round trip changes the lengths: every prompt has exactly its sampled length.
import type { SeededRandom } from "./random.js";

export interface BenchRequest {
  index: number;
  promptTokenIds: number[];
  outputLen: number;
}

export interface RandomDatasetConfig {
  numPrompts: number;
  inputLen: number;
  outputLen: number;
  rangeRatio: number;
  vocabSize: number;
}

export function sampleRandomDataset(config: RandomDatasetConfig, rng: SeededRandom): BenchRequest[] {
  const { numPrompts, inputLen, outputLen, rangeRatio, vocabSize } = config;
  const inputLow = Math.max(1, Math.floor(inputLen * (1 - rangeRatio)));
  const inputHigh = Math.ceil(inputLen * (1 + rangeRatio));
  // get_sampling_params: the output length is at least 1.
  const outputLow = Math.max(1, Math.floor(outputLen * (1 - rangeRatio)));
  const outputHigh = Math.max(1, Math.ceil(outputLen * (1 + rangeRatio)));
  // Drawn in numpy's order: all input lengths, all output lengths, all offsets.
  const inputLens = Array.from({ length: numPrompts }, () => rng.integer(inputLow, inputHigh + 1));
  const outputLens = Array.from({ length: numPrompts }, () => rng.integer(outputLow, outputHigh + 1));
  const offsets = Array.from({ length: numPrompts }, () => rng.integer(0, vocabSize));
  return inputLens.map((len, index) => ({
    index,
    promptTokenIds: Array.from({ length: len }, (_, j) => (offsets[index]! + index + j) % vocabSize),
    outputLen: outputLens[index]!,
  }));
}
