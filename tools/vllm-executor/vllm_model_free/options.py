"""Options of the model-free executor: environment variables, optionally a JSON options file.

Every option has an environment variable; `VLLM_MODEL_FREE_OPTIONS` may name a JSON file holding the
same options by their short names (`{"step_ms": 5, "fail_at_step": 3}`). An environment variable wins
over the file, so a test can share one file and override one value.

The engine core imports the executor in its own process (and each data-parallel rank in its own), so
options travel by environment, which `vllm serve` passes on to its children unchanged.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

ENV_PREFIX = "VLLM_MODEL_FREE_"

def _bool(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected 1/0, true/false, yes/no or on/off")


_bool.__name__ = "boolean"

# short name -> (environment variable, parser, default)
_SPEC: dict[str, tuple[str, Any, Any]] = {
    # KV-cache memory the worker reports as available (bytes); vLLM sizes the block pool from it.
    "kv_cache_bytes": ("VLLM_MODEL_FREE_KV_CACHE_BYTES", int, 64 * 1024 * 1024),
    # Emulated forward time: a fixed part per step plus a part per scheduled token.
    "step_ms": ("VLLM_MODEL_FREE_STEP_MS", float, 0.0),
    "token_us": ("VLLM_MODEL_FREE_TOKEN_US", float, 0.0),
    # Raise inside execute_model on the Nth step that schedules tokens (1-based); 0 = never.
    "fail_at_step": ("VLLM_MODEL_FREE_FAIL_AT_STEP", int, 0),
    # A JSON script mapping prompt token-id subsequences to output token ids (see script.py).
    "script_file": ("VLLM_MODEL_FREE_SCRIPT", str, None),
    # What follows a script that ran out: "continue" (deterministic ids) or "eos".
    "script_end": ("VLLM_MODEL_FREE_SCRIPT_END", str, "continue"),
    # EOS id for script_end "eos"; default: the model config's eos_token_id.
    "eos_token_id": ("VLLM_MODEL_FREE_EOS_TOKEN_ID", int, None),
    # Log each request the worker sees added and finished (freed by the scheduler: stop, length or abort),
    # so a test can read from the engine log that an abort reached the real engine.
    "log_requests": ("VLLM_MODEL_FREE_LOG_REQUESTS", _bool, False),
}

SCRIPT_END_VALUES = ("continue", "eos")


class OptionsError(ValueError):
    """An option has a value the executor cannot use; the message names the option and the fix."""


@dataclass(frozen=True)
class ModelFreeOptions:
    kv_cache_bytes: int = 64 * 1024 * 1024
    step_ms: float = 0.0
    token_us: float = 0.0
    fail_at_step: int = 0
    script_file: str | None = None
    script_end: str = "continue"
    eos_token_id: int | None = None
    log_requests: bool = False
    sources: tuple[str, ...] = field(default=())

    def forward_seconds(self, num_scheduled_tokens: int) -> float:
        return (self.step_ms / 1e3) + (self.token_us / 1e6) * num_scheduled_tokens


def _parse(name: str, parser: Any, raw: Any) -> Any:
    if raw is None:
        return None
    try:
        value = parser(raw)
    except (TypeError, ValueError) as exc:
        env = _SPEC[name][0]
        raise OptionsError(f"model-free executor: option {name} ({env}) = {raw!r} is not a valid {parser.__name__}: {exc}") from None
    if parser in (int, float) and value < 0:
        raise OptionsError(f"model-free executor: option {name} must be >= 0, got {value!r}")
    return value


def load_options(environ: Mapping[str, str] | None = None) -> ModelFreeOptions:
    """Read the options from `environ` (default os.environ) and the file it may name."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    sources: list[str] = []
    file_path = env.get(ENV_PREFIX + "OPTIONS")
    if file_path:
        try:
            with open(file_path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as exc:
            raise OptionsError(f"model-free executor: cannot read options file {file_path}: {exc}") from None
        if not isinstance(data, dict):
            raise OptionsError(f"model-free executor: options file {file_path} must hold a JSON object")
        unknown = sorted(set(data) - set(_SPEC))
        if unknown:
            raise OptionsError(f"model-free executor: unknown option(s) {unknown} in {file_path}; known: {sorted(_SPEC)}")
        for name, raw in data.items():
            values[name] = _parse(name, _SPEC[name][1], raw)
        sources.append(file_path)
    for name, (var, parser, _default) in _SPEC.items():
        if var in env and env[var] != "":
            values[name] = _parse(name, parser, env[var])
            sources.append(var)
    for name, (_var, _parser, default) in _SPEC.items():
        values.setdefault(name, default)
    if values["script_end"] not in SCRIPT_END_VALUES:
        raise OptionsError(f"model-free executor: script_end must be one of {SCRIPT_END_VALUES}, got {values['script_end']!r}")
    return ModelFreeOptions(**values, sources=tuple(sources))
