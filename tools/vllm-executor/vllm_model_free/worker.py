"""A vLLM worker without a model: the engine's scheduler, KV-cache manager and prefix cache run for
real, and each step's `ModelRunnerOutput` is made up here, shaped as vLLM's GPU model runner shapes it.

Followed: `WorkerBase` (vllm/v1/worker/worker_base.py) for the interface; `GPUModelRunner`
(vllm/v1/worker/gpu_model_runner.py) for the per-request state kept across steps (`_update_states`),
which requests get no token in a step (`_prepare_inputs`: a request whose tokens after this step are
fewer than its known tokens is a partial prefill, its sampled token is discarded), the execute_model /
sample_tokens split (execute_model returns None when tokens were scheduled, sample_tokens the output),
and prompt logprobs (`_get_prompt_logprobs_dict`: returned once, on the step that completes the prompt).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from vllm.logger import init_logger
from vllm.v1.kv_cache_interface import KVCacheSpec
from vllm.v1.outputs import EMPTY_MODEL_RUNNER_OUTPUT, AsyncModelRunnerOutput, ModelRunnerOutput
from vllm.v1.worker.worker_base import CompilationTimes, WorkerBase

from . import logprobs as lp
from .kv_spec import kv_cache_specs
from .options import load_options
from .script import ScriptError, ScriptRule, TokenChooser, load_rules, prompt_seed, resolve_script

# Under "vllm." so that vLLM's logging configuration (handler, format, level) applies.
logger = init_logger("vllm.model_free")


class ModelFreeStepFailure(RuntimeError):
    """Raised on purpose (option fail_at_step) so the engine core reaches its ENGINE_CORE_DEAD path."""


@dataclass
class _RequestState:
    prompt: list[int]
    chooser: TokenChooser
    output: list[int]
    num_computed_tokens: int
    num_logprobs: int | None
    # Set while prompt logprobs are still owed (cleared once returned).
    num_prompt_logprobs: int | None

    @property
    def num_tokens(self) -> int:
        return len(self.prompt) + len(self.output)


class _DelayedOutput(AsyncModelRunnerOutput):
    """The step's output, handed over no earlier than the emulated forward pass ends.

    Returned from sample_tokens: with sync scheduling the executor calls get_output at once (the
    engine waits the whole forward time); with async scheduling the engine schedules the next step
    first, as it overlaps a GPU's forward pass.
    """

    def __init__(self, output: ModelRunnerOutput, ready_at: float) -> None:
        self._output = output
        self._ready_at = ready_at

    def get_output(self) -> ModelRunnerOutput:
        remaining = self._ready_at - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)
        return self._output


class ModelFreeWorker(WorkerBase):
    def __init__(self, vllm_config, local_rank, rank, distributed_init_method, is_driver_worker=False) -> None:
        super().__init__(vllm_config, local_rank, rank, distributed_init_method, is_driver_worker)
        self.options = load_options()
        self.requests: dict[str, _RequestState] = {}
        self.rules: list[ScriptRule] = []
        self.steps_with_tokens = 0
        self.pending: tuple[object, float] | None = None
        self.busy_until = 0.0
        self.num_blocks: int | None = None
        self.max_model_len = self.model_config.max_model_len
        self._vocab_size = self.model_config.get_vocab_size()
        self.max_logprobs = self.model_config.max_logprobs
        eos = self.options.eos_token_id
        if eos is None:
            eos = getattr(self.model_config.hf_text_config, "eos_token_id", None)
            if isinstance(eos, list):
                eos = eos[0] if eos else None
        self.eos_token_id: int | None = eos
        self._tokenizer = None
        self.loras: dict[int, None] = {}  # registered adapter ids, least recently used first
        self.pinned_loras: set[int] = set()
        self.sleep_level = 0

    # -- start-up, in the order the engine core calls it -------------------------------------------
    def init_device(self) -> None:
        self.device = torch.device("cpu")

    def load_model(self, *, load_dummy_weights: bool = False) -> None:
        if self.options.script_file:
            self.rules = load_rules(self.options.script_file, self._vocab_size, self._encode)
        logger.info(
            "model-free executor: rank %d, no model loaded; async_scheduling=%s; options %s (from %s), %d script rule(s)",
            self.rank,
            self.scheduler_config.async_scheduling,
            {k: v for k, v in vars(self.options).items() if k != "sources"},
            ", ".join(self.options.sources) or "defaults",
            len(self.rules),
        )

    # Text in scripts (output_text, prompt_contains_text, extra_args.scripted_text) goes through the model's
    # tokenizer, loaded on first use: a headless engine (--skip-tokenizer-init) needs one only for text.
    def _tokenizer_or_fail(self):
        if self._tokenizer is None:
            try:
                from vllm.tokenizers import get_tokenizer

                self._tokenizer = get_tokenizer(self.model_config.tokenizer)
            except Exception as exc:
                raise ScriptError(
                    "model-free executor: scripts with text need the tokenizer files in "
                    f"{self.model_config.tokenizer} ({type(exc).__name__}: {exc}); use token ids or add them"
                ) from None
        return self._tokenizer

    def _encode(self, text: str) -> list[int]:
        return list(self._tokenizer_or_fail().encode(text, add_special_tokens=False))

    def _decode(self, ids) -> str:
        return self._tokenizer_or_fail().decode(list(ids))

    def get_kv_cache_spec(self) -> dict[str, KVCacheSpec]:
        return kv_cache_specs(self.vllm_config)

    def determine_available_memory(self) -> int:
        return self.options.kv_cache_bytes

    def update_max_model_len(self, max_model_len: int) -> None:
        self.max_model_len = max_model_len

    def initialize_from_config(self, kv_cache_config) -> None:
        self.num_blocks = kv_cache_config.num_blocks
        logger.info("model-free executor: KV cache of %d blocks (nothing allocated)", self.num_blocks)

    def compile_or_warm_up_model(self) -> CompilationTimes:
        return CompilationTimes(language_model=0.0, encoder=0.0)

    def get_supported_tasks(self):
        return ("generate",)

    def get_model(self):
        raise NotImplementedError("model-free executor: there is no model to return")

    def get_cache_block_size_bytes(self) -> int:
        specs = self.get_kv_cache_spec()
        return sum(s.page_size_bytes for s in specs.values())

    # -- steps -------------------------------------------------------------------------------------
    def execute_model(self, scheduler_output) -> ModelRunnerOutput | None:
        started = time.monotonic()
        self._update_states(scheduler_output)
        total = scheduler_output.total_num_scheduled_tokens
        if not total:
            return EMPTY_MODEL_RUNNER_OUTPUT
        self.steps_with_tokens += 1
        if self.options.fail_at_step and self.steps_with_tokens == self.options.fail_at_step:
            raise ModelFreeStepFailure(
                f"model-free executor: failing step {self.steps_with_tokens} on purpose "
                "(option fail_at_step / VLLM_MODEL_FREE_FAIL_AT_STEP)"
            )
        # Steps run one after another on a GPU stream: a step scheduled while the previous one is still
        # "running" (async scheduling) starts when that one ends.
        begins = max(started, self.busy_until)
        self.busy_until = begins + self.options.forward_seconds(total)
        self.pending = (scheduler_output, self.busy_until)
        return None

    def sample_tokens(self, grammar_output) -> AsyncModelRunnerOutput:
        if self.pending is None:
            raise RuntimeError("model-free executor: sample_tokens called without a pending execute_model")
        scheduler_output, ready_at = self.pending
        self.pending = None
        # grammar_output (structured-output bitmask) is not applied: scripted ids are emitted as is.
        return _DelayedOutput(self._sample(scheduler_output), ready_at)

    def execute_dummy_batch(self) -> None:
        # Idle data-parallel MoE ranks run a dummy batch to stay in step with busy ones; nothing to do.
        return None

    def take_draft_token_ids(self):
        return None

    # -- per-request state -------------------------------------------------------------------------
    def _update_states(self, so) -> None:
        for req_id in so.finished_req_ids:
            gone = self.requests.pop(req_id, None)
            if gone is not None and self.options.log_requests:
                logger.info("model-free executor: request %s finished after %d outputs", req_id, len(gone.output))
        for new in so.scheduled_new_reqs:
            prompt = new.prompt_token_ids
            if prompt is None:
                raise NotImplementedError("model-free executor: prompt embeddings are not supported (no token ids)")
            lora = getattr(new, "lora_request", None)
            if lora is not None and lora.lora_int_id > 0:
                self._register_lora(lora.lora_int_id)
            sp = new.sampling_params
            if sp is None:
                raise NotImplementedError("model-free executor: pooling requests are not supported")
            script = resolve_script(
                sp.extra_args, prompt, self.rules, self.options.script_end, self._vocab_size, self._encode, self._decode
            )
            # The request's own EOS (the frontend sets it from the tokenizer) over the configured one.
            eos = sp.eos_token_id if sp.eos_token_id is not None else self.eos_token_id
            chooser = TokenChooser(
                script,
                prompt_seed(prompt),
                self._vocab_size,
                eos,
                sp.min_tokens,
                sp.all_stop_token_ids,
            )
            self.requests[new.req_id] = _RequestState(
                prompt=list(prompt),
                chooser=chooser,
                output=[],
                num_computed_tokens=new.num_computed_tokens,
                num_logprobs=self._cap(sp.logprobs),
                num_prompt_logprobs=self._cap(sp.prompt_logprobs),
            )
            if self.options.log_requests:
                logger.info(
                    "model-free executor: request %s added (%d prompt tokens, %s%s)",
                    new.req_id,
                    len(prompt),
                    f"script of {len(script.token_ids)} ids" if script else "no script",
                    f", LoRA {lora.lora_int_id}" if lora is not None else "",
                )
        cached = so.scheduled_cached_reqs
        for i, req_id in enumerate(cached.req_ids):
            state = self.requests[req_id]
            state.num_computed_tokens = cached.num_computed_tokens[i]
            num_output = cached.num_output_tokens[i]
            if num_output < len(state.output):
                # Outputs the scheduler dropped (as GPUModelRunner._update_states aligns them).
                del state.output[num_output:]

    def _cap(self, n: int | None) -> int | None:
        # -1 means the whole vocabulary, as vLLM's InputBatch maps it.
        if n is None:
            return None
        return self._vocab_size if n == -1 else n

    def _sample(self, so) -> ModelRunnerOutput:
        req_ids = list(so.num_scheduled_tokens.keys())
        sampled: list[list[int]] = []
        row_tokens: list[int] = []
        prompt_logprobs_dict = {}
        for req_id in req_ids:
            state = self.requests[req_id]
            scheduled = so.num_scheduled_tokens[req_id]
            start = state.num_computed_tokens
            if state.num_prompt_logprobs is not None:
                done = self._prompt_logprobs(state, start, scheduled)
                if done is not None:
                    prompt_logprobs_dict[req_id] = done
            if start + scheduled < state.num_tokens:
                sampled.append([])  # partial prefill: no token this step
                row_tokens.append(0)
                continue
            token = state.chooser.token(len(state.output))
            state.output.append(token)
            sampled.append([token])
            row_tokens.append(token)
        wanted = [self.requests[r].num_logprobs for r in req_ids if self.requests[r].num_logprobs is not None]
        logprobs = lp.sample_logprobs(row_tokens, max(wanted), self._vocab_size) if wanted else None
        return ModelRunnerOutput(
            req_ids=req_ids,
            req_id_to_index={r: i for i, r in enumerate(req_ids)},
            sampled_token_ids=sampled,
            logprobs=logprobs,
            prompt_logprobs_dict=prompt_logprobs_dict,
        )

    def _prompt_logprobs(self, state: _RequestState, start: int, scheduled: int):
        # The whole prompt's tensors go out on the step that computes its last position, as
        # GPUModelRunner._get_prompt_logprobs_dict does (chunks before it return nothing).
        remaining = len(state.prompt) - (start + 1)
        if scheduled <= remaining:
            return None
        n = state.num_prompt_logprobs
        state.num_prompt_logprobs = None
        return lp.prompt_logprobs(state.prompt, n, self._vocab_size)

    # -- the rest of the worker interface ----------------------------------------------------------
    def check_health(self) -> None:
        return None

    def reset_mm_cache(self) -> None:
        return None

    def reset_encoder_cache(self) -> None:
        return None

    def profile(self, is_start: bool = True, profile_prefix: str | None = None) -> None:
        return None

    # Nothing to offload: the level and the woken tags are only recorded (vLLM's executor keeps the
    # is_sleeping state the engine reports; these let a test see the calls reached the worker).
    def sleep(self, level: int = 1) -> None:
        self.sleep_level = level
        logger.info("model-free executor: sleep(level=%d), nothing to offload", level)

    def wake_up(self, tags: list[str] | None = None) -> None:
        self.sleep_level = 0
        logger.info("model-free executor: wake_up(tags=%s)", tags)

    # LoRA: no weights to load, so an adapter is only its id, tracked as vLLM's LRU worker manager tracks
    # it (vllm/lora/worker_manager.py LRUCacheWorkerLoRAManager, vllm/lora/model_manager.py
    # LRUCacheLoRAModelManager): add_lora registers (True, also for one already there), evicting the
    # least recently used unpinned adapter beyond max_cpu_loras; a request's adapter is registered when it is
    # scheduled (as set_active_loras loads it); remove_lora says whether it was there; pin_lora of an
    # unknown id raises vLLM's "Pinning failed" error.
    def add_lora(self, lora_request) -> bool:
        self._register_lora(lora_request.lora_int_id)
        return True

    def remove_lora(self, lora_id: int) -> bool:
        self.pinned_loras.discard(lora_id)
        if lora_id not in self.loras:
            return False
        del self.loras[lora_id]
        return True

    def pin_lora(self, lora_id: int) -> bool:
        if lora_id not in self.loras:
            raise ValueError(f"Pinning failed. LoRA {lora_id} is not registered.")
        self.pinned_loras.add(lora_id)
        return True

    def list_loras(self) -> set[int]:
        return set(self.loras)

    def _register_lora(self, lora_id: int) -> None:
        self.loras.pop(lora_id, None)
        self.loras[lora_id] = None  # most recently used last
        capacity = self._lora_capacity()
        while capacity is not None and len(self.loras) > capacity:
            oldest = next((i for i in self.loras if i not in self.pinned_loras and i != lora_id), None)
            if oldest is None:
                break
            del self.loras[oldest]

    def _lora_capacity(self) -> int | None:
        config = getattr(getattr(self, "vllm_config", None), "lora_config", None)
        if config is None:
            return None
        return getattr(config, "max_cpu_loras", None) or getattr(config, "max_loras", None)

    def shutdown(self) -> None:
        self.requests.clear()
