"""A model-free executor for vLLM's engine core: the real scheduler, KV-cache manager and prefix
cache run; token ids come from a script or a deterministic rule instead of a model."""

__all__ = ["ModelFreeExecutor"]


def __getattr__(name: str):
    # Lazy, so that the pure-Python parts (script, options) import without vLLM.
    if name == "ModelFreeExecutor":
        from .executor import ModelFreeExecutor

        return ModelFreeExecutor
    raise AttributeError(name)
