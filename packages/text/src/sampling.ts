// The model's EOS ids added to a request's sampling parameters as vLLM's frontend adds them before the
// request goes to the engine (vllm/sampling_params.py, `__post_init__` and `update_from_generation_config`,
// called by vllm/v1/engine/input_processor.py with the tokenizer's eos_token_id). The engine does the
// rest: it stops on `_eos_token_id` unless `ignore_eos`, on `stop_token_ids`, and uses
// `_all_stop_token_ids` to hold every one of them back until `min_tokens`.
import type { SamplingParamsInit } from "@vllm-engine-core/client";
import type { Tokenizer } from "./tokenizer.js";

/** Returns a copy of `params` with `eosTokenId`, `stopTokenIds` and `allStopTokenIds` filled in. */
export function withModelStopTokens(
  params: SamplingParamsInit,
  tokenizer: Pick<Tokenizer, "eosTokenId" | "generationEosTokenIds">,
): SamplingParamsInit {
  const out: SamplingParamsInit = { ...params };
  const ignoreEos = params.ignoreEos ?? false;
  const userStopTokenIds = params.stopTokenIds ?? [];
  // __post_init__: `_all_stop_token_ids.update(stop_token_ids)`.
  const all = new Set<number>([...(params.allStopTokenIds ?? []), ...userStopTokenIds]);
  const eos = tokenizer.eosTokenId;
  if (!ignoreEos && eos !== null) out.eosTokenId = eos;
  if (eos !== null) all.add(eos);
  // generation_config's EOS ids other than the primary one become stop token ids.
  const extra = new Set(tokenizer.generationEosTokenIds);
  if (eos !== null) extra.delete(eos);
  if (extra.size > 0) {
    for (const id of extra) all.add(id);
    if (!ignoreEos) out.stopTokenIds = [...new Set([...extra, ...userStopTokenIds])].sort((a, b) => a - b);
  }
  if (all.size > 0) out.allStopTokenIds = [...all].sort((a, b) => a - b);
  return out;
}
