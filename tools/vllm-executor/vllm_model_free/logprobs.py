"""Logprobs in the shapes and dtypes vLLM's sampler produces, with made-up but consistent values.

Followed: `Sampler.gather_logprobs` (vllm/v1/sample/sampler.py) and `batched_count_greater_than`
(vllm/v1/sample/ops/logprobs.py): per position, column 0 is the sampled (or prompt) token, columns
1..k its top-k; token ids int32, logprobs float32, ranks int64 (a sum over a bool tensor). Sample
logprobs cover every request row of the batch with the batch's largest `logprobs` (-1 = the whole
vocabulary, as `InputBatch.num_logprobs` maps it); prompt logprobs are one `LogprobsTensors` per
request, `num_prompt_tokens - 1` rows (`GPUModelRunner._get_prompt_logprobs_dict`).

Values: the emitted token is always the model's top-1 (rank 1, as a greedy sampler gives), its
logprob is -0.25, and top-k entry j (0-based) is token `(t + j) % vocab` with logprob
`-(0.25 + 0.5 * j)`, so the first top-k entry repeats the sampled token as it does in vLLM.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from vllm.v1.outputs import LogprobsLists, LogprobsTensors

SAMPLED_LOGPROB = -0.25
STEP = 0.5


def _rows(token_ids: Sequence[int], num_logprobs: int, vocab_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(token_ids)
    cols = num_logprobs + 1
    tok = np.asarray(token_ids, dtype=np.int64).reshape(n, 1)
    ids = np.empty((n, cols), dtype=np.int32)
    lps = np.empty((n, cols), dtype=np.float32)
    ids[:, 0:1] = tok
    lps[:, 0] = SAMPLED_LOGPROB
    if num_logprobs > 0:
        j = np.arange(num_logprobs, dtype=np.int64).reshape(1, num_logprobs)
        ids[:, 1:] = (tok + j) % vocab_size
        lps[:, 1:] = (SAMPLED_LOGPROB - STEP * j).astype(np.float32)
    ranks = np.ones(n, dtype=np.int64)
    return ids, lps, ranks


def sample_logprobs(token_ids: Sequence[int], num_logprobs: int, vocab_size: int) -> LogprobsLists:
    """One row per request of the batch (its sampled token, or any id for a discarded row)."""
    ids, lps, ranks = _rows(token_ids, num_logprobs, vocab_size)
    return LogprobsLists(ids, lps, ranks, None)


def prompt_logprobs(prompt_token_ids: Sequence[int], num_logprobs: int, vocab_size: int) -> LogprobsTensors:
    """Rows for prompt positions 1..n-1 (position 0 has no logprob), as torch tensors.

    Filled into `LogprobsTensors.empty_cpu` (vllm/v1/outputs.py), as the GPU runner does: int32 ids,
    float32 logprobs, int32 ranks. A tensor made with `torch.from_numpy` from an empty array (a one-token
    prompt: 0 rows) carries a 0 stride, which vLLM's msgpack encoder (`tensor_data`) cannot view as bytes:
    that killed the engine's output thread.
    """
    ids, lps, ranks = _rows(list(prompt_token_ids[1:]), num_logprobs, vocab_size)
    out = LogprobsTensors.empty_cpu(len(prompt_token_ids) - 1 if prompt_token_ids else 0, num_logprobs + 1)
    out.logprob_token_ids.copy_(torch.from_numpy(ids))
    out.logprobs.copy_(torch.from_numpy(lps))
    out.selected_token_ranks.copy_(torch.from_numpy(ranks))
    return out
