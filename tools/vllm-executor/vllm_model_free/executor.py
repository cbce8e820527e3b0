"""The executor vLLM loads with `--distributed-executor-backend vllm_model_free.ModelFreeExecutor`.

It is vLLM's `UniProcExecutor` (vllm/v1/executor/uniproc_executor.py) — one in-process worker behind
`WorkerWrapperBase`, `collective_rpc` calling it directly, async scheduling supported — with the
worker class swapped for `ModelFreeWorker`, and no model load beyond reading options.
"""

from __future__ import annotations

from vllm.v1.executor.uniproc_executor import UniProcExecutor

WORKER_CLASS = "vllm_model_free.worker.ModelFreeWorker"


class ModelFreeExecutor(UniProcExecutor):
    def _init_executor(self) -> None:
        # WorkerWrapperBase.init_worker resolves the worker by qualified name; the platform set it to
        # its own (CPUWorker here), which would build a real model runner.
        self.vllm_config.parallel_config.worker_cls = WORKER_CLASS
        super()._init_executor()
