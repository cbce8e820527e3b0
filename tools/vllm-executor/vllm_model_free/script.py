"""Which token a request gets next: its script first, then deterministic ids (or EOS).

A request's script comes from, in order:
1. `sampling_params.extra_args["scripted_token_ids"]`, or `["scripted_text"]` (encoded with the model's
   tokenizer), optionally `extra_args["scripted_end"]`: "continue" | "eos". vLLM's OpenAI server fills `extra_args` from the request body's `vllm_xargs`,
   so this works through our frontend (`samplingParams.extraArgs`) and through vLLM's own server.
2. The script file (option `script_file`): the first rule whose `prompt_contains` token-id list occurs
   contiguously in the prompt token ids (or whose `prompt_contains_text` occurs in the decoded prompt)
   supplies `output` ids or `output_text` (and optionally `end`).

Past the script, output index k of a request gets `deterministic_token(seed, k)`, where the seed is
derived from the prompt token ids only, so two requests with the same prompt get the same ids (as a
greedy model would) whatever their request ids.

Pure Python, no vLLM import: unit-testable on its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

# Deterministic ids are drawn from [_BASE, _BASE + _SPAN): ordinary BPE tokens in a Qwen-sized vocab,
# far from the special tokens at its top end, so decoded text stays plain.
_BASE = 1000
_SPAN = 50000


class ScriptError(ValueError):
    """A script (request field or file) is malformed; the message says which and how to fix it."""


@dataclass(frozen=True)
class Script:
    token_ids: tuple[int, ...]
    end: str  # "continue" | "eos"


@dataclass(frozen=True)
class ScriptRule:
    # Exactly one of the two: a token-id subsequence, or a text the decoded prompt contains.
    prompt_contains: tuple[int, ...] | None
    prompt_contains_text: str | None
    output: tuple[int, ...]
    end: str | None


# Text in scripts needs the model's tokenizer: encode(text) -> ids without special tokens, decode(ids) -> text.
Encode = Callable[[str], list[int]]
Decode = Callable[[Sequence[int]], str]


def prompt_seed(prompt_token_ids: Sequence[int]) -> int:
    """A stable 31-bit digest of the prompt (order-sensitive), independent of Python's hash seed."""
    h = 2166136261
    for t in prompt_token_ids:
        h = ((h ^ (t & 0xFFFFFFFF)) * 16777619) & 0xFFFFFFFF
    return h & 0x7FFFFFFF


def deterministic_token(seed: int, index: int, vocab_size: int) -> int:
    span = max(1, min(_SPAN, vocab_size - _BASE)) if vocab_size > _BASE else max(1, vocab_size)
    base = _BASE if vocab_size > _BASE else 0
    return base + ((seed * 31 + index * 7919) % span)


def _check_ids(value: Any, where: str, vocab_size: int) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(t, int) and not isinstance(t, bool) for t in value):
        raise ScriptError(f"model-free executor: {where} must be a list of integer token ids, got {value!r}")
    bad = [t for t in value if t < 0 or t >= vocab_size]
    if bad:
        raise ScriptError(f"model-free executor: {where} has ids outside the vocabulary [0, {vocab_size}): {bad[:5]}")
    return tuple(value)


def _check_end(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if value not in ("continue", "eos"):
        raise ScriptError(f"model-free executor: {where} must be 'continue' or 'eos', got {value!r}")
    return value


def load_rules(path: str, vocab_size: int, encode: Encode | None = None) -> list[ScriptRule]:
    """Read a script file: {"rules": [{"prompt_contains": [...] | "prompt_contains_text": "...",
    "output": [...] | "output_text": "...", "end"?: "eos" | "continue"}]}."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        raise ScriptError(f"model-free executor: cannot read script file {path}: {exc}") from None
    rules = data.get("rules") if isinstance(data, dict) else None
    if not isinstance(rules, list):
        raise ScriptError(f"model-free executor: script file {path} must hold {{\"rules\": [...]}}")
    out = []
    for i, rule in enumerate(rules):
        where = f"{path} rules[{i}]"
        if not isinstance(rule, dict):
            raise ScriptError(f"model-free executor: {where} must be an object")
        needle = None
        text = None
        if ("prompt_contains" in rule) == ("prompt_contains_text" in rule):
            raise ScriptError(f"model-free executor: {where} needs exactly one of prompt_contains, prompt_contains_text")
        if "prompt_contains" in rule:
            needle = _check_ids(rule["prompt_contains"], f"{where}.prompt_contains", vocab_size)
            if not needle:
                raise ScriptError(f"model-free executor: {where}.prompt_contains must not be empty")
        else:
            text = rule["prompt_contains_text"]
            if not isinstance(text, str) or not text:
                raise ScriptError(f"model-free executor: {where}.prompt_contains_text must be a non-empty string")
        if ("output" in rule) == ("output_text" in rule):
            raise ScriptError(f"model-free executor: {where} needs exactly one of output, output_text")
        if "output" in rule:
            output = _check_ids(rule["output"], f"{where}.output", vocab_size)
        else:
            output = _encode_text(rule["output_text"], f"{where}.output_text", encode, vocab_size)
        out.append(ScriptRule(needle, text, output, _check_end(rule.get("end"), f"{where}.end")))
    return out


def _encode_text(text: Any, where: str, encode: Encode | None, vocab_size: int) -> tuple[int, ...]:
    if not isinstance(text, str):
        raise ScriptError(f"model-free executor: {where} must be a string, got {text!r}")
    if encode is None:
        raise ScriptError(f"model-free executor: {where} needs the model's tokenizer, which is not available")
    return _check_ids(list(encode(text)), where, vocab_size)


def _contains(haystack: Sequence[int], needle: Sequence[int]) -> bool:
    n = len(needle)
    first = needle[0]
    for i in range(len(haystack) - n + 1):
        if haystack[i] == first and list(haystack[i : i + n]) == list(needle):
            return True
    return False


def resolve_script(
    extra_args: dict[str, Any] | None,
    prompt_token_ids: Sequence[int],
    rules: Iterable[ScriptRule],
    default_end: str,
    vocab_size: int,
    encode: Encode | None = None,
    decode: Decode | None = None,
) -> Script | None:
    """The script for one request, or None (deterministic ids from the start)."""
    if extra_args and ("scripted_token_ids" in extra_args or "scripted_text" in extra_args):
        if "scripted_token_ids" in extra_args:
            ids = _check_ids(extra_args["scripted_token_ids"], "extra_args.scripted_token_ids", vocab_size)
        else:
            ids = _encode_text(extra_args["scripted_text"], "extra_args.scripted_text", encode, vocab_size)
        end = _check_end(extra_args.get("scripted_end"), "extra_args.scripted_end") or default_end
        return Script(ids, end)
    prompt_text: str | None = None
    for rule in rules:
        if rule.prompt_contains is not None:
            matched = _contains(prompt_token_ids, rule.prompt_contains)
        else:
            if prompt_text is None:
                if decode is None:
                    raise ScriptError("model-free executor: a prompt_contains_text rule needs the model's tokenizer")
                prompt_text = decode(prompt_token_ids)
            matched = rule.prompt_contains_text in prompt_text  # type: ignore[operator]
        if matched:
            return Script(rule.output, rule.end or default_end)
    return None


class TokenChooser:
    """Picks output token k for one request, as a greedy sampler that follows the script would."""

    def __init__(
        self,
        script: Script | None,
        seed: int,
        vocab_size: int,
        eos_token_id: int | None,
        min_tokens: int,
        stop_token_ids: Iterable[int],
    ) -> None:
        self.script = script
        self.seed = seed
        self.vocab_size = vocab_size
        self.eos_token_id = eos_token_id
        self.min_tokens = min_tokens
        # vLLM's min-tokens logits processor masks these until min_tokens outputs exist.
        self.banned_early = set(stop_token_ids) | ({eos_token_id} if eos_token_id is not None else set())

    def token(self, index: int) -> int:
        tok = self._raw(index)
        if index < self.min_tokens and tok in self.banned_early:
            # The real sampler cannot pick a stop/EOS token before min_tokens: take the next
            # deterministic id that is not one.
            probe = index
            while tok in self.banned_early:
                tok = deterministic_token(self.seed, probe, self.vocab_size)
                probe += 1
        return tok

    def _raw(self, index: int) -> int:
        s = self.script
        if s is not None:
            if index < len(s.token_ids):
                return s.token_ids[index]
            if s.end == "eos" and self.eos_token_id is not None:
                return self.eos_token_id
        return deterministic_token(self.seed, index, self.vocab_size)
