// RepetitionDetectionParams (a pydantic dataclass in vllm/sampling_params.py): field types, then
// __post_init__, while msgspec decodes SamplingParams.repetition_detection.
import type { Checker } from "./checker.js";
import { int, structObject } from "./msgspec-types.js";

export function verifyRepetitionDetectionParams(c: Checker, at: string, value: unknown): void {
  const rd = structObject(c, at, value, "object");
  const read = (key: string) => (rd[key] === undefined ? 0n : int(c, `${at}.${key}`, rd[key]));
  const max = read("maxPatternSize");
  const min = read("minPatternSize");
  const minCount = read("minCount");
  c.require(
    max >= 0n && min >= 0n && min <= max,
    "RepetitionDetectionParams.sizes",
    at,
    `{maxPatternSize: ${max}, minPatternSize: ${min}}`,
  );
  if (max > 0n) {
    c.require(minCount >= 2n, "RepetitionDetectionParams.min_count", `${at}.minCount`, minCount);
  }
}
