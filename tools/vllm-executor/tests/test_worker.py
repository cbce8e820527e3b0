"""The worker's step outputs, driven with vLLM's own SchedulerOutput types (needs vLLM importable:
run with the kit's Python, see the README)."""

import unittest

try:
    from vllm.sampling_params import SamplingParams
    from vllm.v1.core.sched.output import CachedRequestData, NewRequestData, SchedulerOutput

    from vllm_model_free.options import load_options
    from vllm_model_free.worker import ModelFreeStepFailure, ModelFreeWorker

    HAVE_VLLM = True
except ImportError as exc:  # pragma: no cover - depends on the interpreter
    HAVE_VLLM = False
    WHY = f"vLLM is not importable here ({exc}); run with the kit's Python"

VOCAB = 151936


def make_worker(env=None):
    # The worker without vLLM's config: only what the step path reads.
    w = ModelFreeWorker.__new__(ModelFreeWorker)
    w.options = load_options(env or {})
    w.requests = {}
    w.rules = []
    w.steps_with_tokens = 0
    w.pending = None
    w.busy_until = 0.0
    w._vocab_size = VOCAB
    w.eos_token_id = 151645
    w.loras = {}
    w.pinned_loras = set()
    w.sleep_level = 0
    return w


def new_req(req_id, prompt, lora_request=None, **sp):
    return NewRequestData(
        req_id=req_id,
        prompt_token_ids=prompt,
        mm_features=[],
        sampling_params=SamplingParams(**sp),
        pooling_params=None,
        block_ids=([],),
        num_computed_tokens=0,
        lora_request=lora_request,
    )


def step(new=(), cached=None, scheduled=None, finished=()):
    scheduled = scheduled or {}
    return SchedulerOutput(
        scheduled_new_reqs=list(new),
        scheduled_cached_reqs=cached or CachedRequestData.make_empty(),
        num_scheduled_tokens=scheduled,
        total_num_scheduled_tokens=sum(scheduled.values()),
        scheduled_spec_decode_tokens={},
        scheduled_encoder_inputs={},
        num_common_prefix_blocks=[],
        finished_req_ids=set(finished),
        free_encoder_mm_hashes=[],
    )


def cached(ids, computed, outputs):
    return CachedRequestData(
        req_ids=list(ids),
        resumed_req_ids=set(),
        new_token_ids=[[] for _ in ids],
        all_token_ids={},
        new_block_ids=[None for _ in ids],
        num_computed_tokens=list(computed),
        num_output_tokens=list(outputs),
    )


def run(worker, so):
    result = worker.execute_model(so)
    if result is not None:
        return result
    return worker.sample_tokens(None).get_output()


@unittest.skipUnless(HAVE_VLLM, "vLLM not importable" if HAVE_VLLM else WHY)
class WorkerStepTest(unittest.TestCase):
    def test_partial_prefill_chunks_get_no_token_and_prompt_logprobs_come_once_whole(self):
        w = make_worker()
        prompt = list(range(100, 140))  # 40 tokens in chunks of 16, 16, 8
        out = run(w, step(new=[new_req("a", prompt, max_tokens=3, prompt_logprobs=2, extra_args={"scripted_token_ids": [7, 8]})], scheduled={"a": 16}))
        self.assertEqual(out.sampled_token_ids, [[]])
        self.assertEqual(out.prompt_logprobs_dict, {})
        out = run(w, step(cached=cached(["a"], [16], [0]), scheduled={"a": 16}))
        self.assertEqual(out.sampled_token_ids, [[]])
        out = run(w, step(cached=cached(["a"], [32], [0]), scheduled={"a": 8}))
        self.assertEqual(out.sampled_token_ids, [[7]])
        plp = out.prompt_logprobs_dict["a"]
        self.assertEqual(tuple(plp.logprob_token_ids.shape), (39, 3))
        self.assertEqual(plp.logprob_token_ids[:, 0].tolist(), prompt[1:])
        self.assertEqual(str(plp.logprob_token_ids.dtype), "torch.int32")
        self.assertEqual(str(plp.logprobs.dtype), "torch.float32")
        self.assertEqual(str(plp.selected_token_ranks.dtype), "torch.int32")
        out = run(w, step(cached=cached(["a"], [40], [1]), scheduled={"a": 1}))
        self.assertEqual(out.sampled_token_ids, [[8]])
        self.assertEqual(out.prompt_logprobs_dict, {})

    def test_sample_logprobs_cover_every_row_with_the_batch_maximum(self):
        w = make_worker()
        so = step(
            new=[
                new_req("a", [1, 2], max_tokens=2, logprobs=3, extra_args={"scripted_token_ids": [50]}),
                new_req("b", [3, 4], max_tokens=2, extra_args={"scripted_token_ids": [60]}),
            ],
            scheduled={"a": 2, "b": 2},
        )
        out = run(w, so)
        self.assertEqual(out.sampled_token_ids, [[50], [60]])
        self.assertEqual(out.req_id_to_index, {"a": 0, "b": 1})
        lp = out.logprobs
        self.assertEqual(lp.logprob_token_ids.shape, (2, 4))
        self.assertEqual(lp.logprob_token_ids[:, 0].tolist(), [50, 60])
        self.assertEqual(lp.logprob_token_ids[0, 1], 50)  # top-1 is the sampled token
        self.assertEqual(lp.sampled_token_ranks.tolist(), [1, 1])
        self.assertEqual((lp.logprob_token_ids.dtype.name, lp.logprobs.dtype.name, lp.sampled_token_ranks.dtype.name), ("int32", "float32", "int64"))
        self.assertTrue((lp.logprobs[:, 1:-1] > lp.logprobs[:, 2:]).all())

    def test_one_token_prompt_gets_empty_prompt_logprobs_that_vllm_can_encode(self):
        from vllm.v1.utils import tensor_data

        w = make_worker()
        out = run(w, step(new=[new_req("a", [5], max_tokens=1, prompt_logprobs=1)], scheduled={"a": 1}))
        plp = out.prompt_logprobs_dict["a"]
        self.assertEqual(tuple(plp.logprob_token_ids.shape), (0, 2))
        self.assertEqual(str(plp.selected_token_ranks.dtype), "torch.int32")
        # vLLM's msgpack encoder views each tensor as bytes; a 0-stride empty tensor made it raise.
        for t in (plp.logprob_token_ids, plp.logprobs, plp.selected_token_ranks):
            tensor_data(t)

    def test_no_logprobs_requested_means_none(self):
        w = make_worker()
        out = run(w, step(new=[new_req("a", [1], max_tokens=1)], scheduled={"a": 1}))
        self.assertIsNone(out.logprobs)

    def test_an_empty_step_returns_the_empty_output_and_does_not_count(self):
        w = make_worker({"VLLM_MODEL_FREE_FAIL_AT_STEP": "1"})
        out = w.execute_model(step())
        self.assertEqual(out.req_ids, [])
        with self.assertRaises(ModelFreeStepFailure):
            w.execute_model(step(new=[new_req("a", [1], max_tokens=1)], scheduled={"a": 1}))

    def test_dropped_outputs_are_forgotten_and_finished_requests_removed(self):
        w = make_worker()
        run(w, step(new=[new_req("a", [1, 2], max_tokens=5, extra_args={"scripted_token_ids": [5, 6, 7]})], scheduled={"a": 2}))
        run(w, step(cached=cached(["a"], [2], [1]), scheduled={"a": 1}))
        self.assertEqual(w.requests["a"].output, [5, 6])
        # The scheduler says only one output survives (e.g. a rejected speculative token): output 2 again.
        out = run(w, step(cached=cached(["a"], [2], [1]), scheduled={"a": 1}))
        self.assertEqual(out.sampled_token_ids, [[6]])
        run(w, step(finished=["a"]))
        self.assertNotIn("a", w.requests)

    def test_forward_time_is_waited_for_in_get_output(self):
        import time

        w = make_worker({"VLLM_MODEL_FREE_STEP_MS": "300", "VLLM_MODEL_FREE_TOKEN_US": "1000"})
        started = time.monotonic()
        self.assertIsNone(w.execute_model(step(new=[new_req("a", list(range(20)), max_tokens=1)], scheduled={"a": 20})))
        delayed = w.sample_tokens(None)
        # Handed over before the emulated forward pass ends (async scheduling overlaps it) ...
        self.assertLess(time.monotonic() - started, 0.3)
        delayed.get_output()
        # ... and delivered only after 300 ms + 20 tokens x 1 ms.
        self.assertGreaterEqual(time.monotonic() - started, 0.32 - 0.002)

    def test_overlapping_steps_run_back_to_back_like_a_gpu_stream(self):
        w = make_worker({"VLLM_MODEL_FREE_STEP_MS": "1000"})
        w.execute_model(step(new=[new_req("a", [1], max_tokens=3)], scheduled={"a": 1}))
        first = w.sample_tokens(None)
        # Async scheduling: the next step is scheduled before the first one's output is read.
        w.execute_model(step(cached=cached(["a"], [1], [1]), scheduled={"a": 1}))
        second = w.sample_tokens(None)
        self.assertAlmostEqual(second._ready_at - first._ready_at, 1.0, delta=0.05)



class _LoRA:
    def __init__(self, lora_int_id):
        self.lora_int_id = lora_int_id


class _LoRAConfig:
    max_cpu_loras = 2


class _Config:
    lora_config = _LoRAConfig()


@unittest.skipUnless(HAVE_VLLM, "vLLM not importable" if HAVE_VLLM else WHY)
class WorkerLoRATest(unittest.TestCase):
    def test_adapters_are_tracked_as_vllms_lru_manager_tracks_them(self):
        w = make_worker()
        self.assertTrue(w.add_lora(_LoRA(1)))
        self.assertTrue(w.add_lora(_LoRA(1)))  # already there: touched, still True
        self.assertTrue(w.add_lora(_LoRA(2)))
        self.assertEqual(w.list_loras(), {1, 2})
        self.assertTrue(w.pin_lora(1))
        with self.assertRaisesRegex(ValueError, "Pinning failed. LoRA 9 is not registered."):
            w.pin_lora(9)
        self.assertTrue(w.remove_lora(2))
        self.assertFalse(w.remove_lora(2))
        self.assertEqual(w.list_loras(), {1})

    def test_a_scheduled_request_registers_its_adapter_and_capacity_evicts_the_oldest_unpinned(self):
        w = make_worker()
        w.vllm_config = _Config()
        w.add_lora(_LoRA(1))
        w.pin_lora(1)
        w.add_lora(_LoRA(2))
        run(w, step(new=[new_req("a", [1, 2], lora_request=_LoRA(3), max_tokens=1)], scheduled={"a": 2}))
        # Capacity 2: 2 (oldest unpinned) goes, pinned 1 stays, the request's 3 is registered.
        self.assertEqual(w.list_loras(), {1, 3})

    def test_sleep_and_wake_up_are_recorded(self):
        w = make_worker()
        w.sleep(level=2)
        self.assertEqual(w.sleep_level, 2)
        w.wake_up(tags=["weights"])
        self.assertEqual(w.sleep_level, 0)


if __name__ == "__main__":
    unittest.main()
