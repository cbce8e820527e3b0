"""KV-cache specs per attention layer, from the model config alone.

A real worker asks every `Attention` module of the loaded model (`GPUModelRunner.get_kv_cache_spec`,
vllm/v1/worker/gpu_model_runner.py); with no model, the same numbers come from `config.json` through
vLLM's `ModelConfig` (layers, KV heads for this rank, head size, dtype). Every layer is full attention
(what Qwen3 dense and Qwen3-MoE have); sliding-window, MLA and Mamba layers are not emulated.
"""

from __future__ import annotations

from vllm.config import VllmConfig
from vllm.utils.torch_utils import kv_cache_dtype_str_to_dtype
from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheSpec


def layer_name(index: int) -> str:
    # The name vLLM's Qwen3 model registers its attention layer under.
    return f"model.layers.{index}.self_attn.attn"


def kv_cache_specs(vllm_config: VllmConfig) -> dict[str, KVCacheSpec]:
    model_config = vllm_config.model_config
    parallel_config = vllm_config.parallel_config
    cache_config = vllm_config.cache_config
    dtype = kv_cache_dtype_str_to_dtype(cache_config.cache_dtype, model_config)
    spec = FullAttentionSpec(
        block_size=cache_config.block_size,
        num_kv_heads=model_config.get_num_kv_heads(parallel_config),
        head_size=model_config.get_head_size(),
        dtype=dtype,
    )
    return {layer_name(i): spec for i in range(model_config.get_num_layers(parallel_config))}
