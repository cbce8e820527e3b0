#!/usr/bin/python3
"""Build the per-version wire vectors in test/vectors/versions/ from each vLLM tag's own field lists.

msgspec cannot be installed on the machine these were made on (no PyPI, no Debian package), so this
script does what msgspec does with vLLM's structs, following msgspec's encoder rules (jcrist/msgspec
src/msgspec/_core.c, functions named below), and packs the scalars with msgpack-python
(Debian python3-msgpack):

- array_like Struct (mpack_encode_struct_array): an array of EVERY field in declaration order;
  omit_defaults has no effect on array_like structs.
- Struct with omit_defaults and no array_like (mpack_encode_struct_object): a map of the fields whose
  value is not the default (is_default: identity, or an empty list/dict/set for a default_factory);
  the header width follows the number of declared fields (map16 from 16 fields), the count is the
  number of keys written. Callers give the keys a Python frontend would write (see SAMPLES).
- dataclass, pydantic dataclass, @config class (mpack_encode_dataclass): a map of every field in
  `__dataclass_fields__` order (base classes first), None included.
- plain dict: a map in insertion order. Python float -> float64 (mpack_encode_float), int -> the
  smallest int format (mpack_encode_long), str -> fixstr/str8/str16, set/tuple/list -> array,
  IntEnum -> its int.

The field lists are NOT written down here: for every revision the script reads the class bodies out of
the vLLM mirror (`git show <rev>:<path>`) and parses them with `ast` (annotated assignments in class
order; struct options from the class keywords; dataclass-ness from the decorators). The sample values
below are illustrative; a field a revision does not declare is simply not part of that revision's
message, exactly as that revision's engine could not send it.

Self-check (--check, on by default): every vector of test/vectors/vectors.json that real msgspec
produced from vLLM's structs at the pin is unpacked with msgpack, re-typed with the pin's field lists
and re-encoded with the rules above; all of them must come out byte for byte identical. The pin's
request and registration samples must also equal the real-msgspec vectors they were copied from.

Usage: /usr/bin/python3 packages/protocol/scripts/gen-version-vectors.py [--mirror PATH]
Writes packages/protocol/test/vectors/versions/<revision>.json. Tests never run this script.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
OUT_DIR = PACKAGE / "test" / "vectors" / "versions"
PIN_VECTORS = PACKAGE / "test" / "vectors" / "vectors.json"
DEFAULT_MIRROR = "/work/.mirror/aoshen02+vllm/repo"

# (codec version id, git revision, label). The ids are the ones packages/protocol/src/versions uses.
REVISIONS = [
    ("0.22", "v0.22.1", "vLLM v0.22.1 (v0.22.0 has the same structs)"),
    ("0.23", "v0.23.0", "vLLM v0.23.0"),
    ("0.24", "v0.24.0", "vLLM v0.24.0"),
    ("0.25", "v0.25.1", "vLLM v0.25.1 (v0.25.0 has the same structs)"),
    ("main", "c67fe497a25d5af10a6ca0be9d18bcdd42cac4f1", "vLLM main at the pin c67fe497"),
    ("next", "58d3918e3ea0a544ffedadad2ba84559e9c51d8f", "upstream main after the pin (58d3918e3, 2026-08-08)"),
]

# Where each struct is declared (the same path in every revision).
STRUCT_FILES = {
    "vllm/v1/engine/__init__.py": [
        "EngineCoreReadyResponse",
        "EngineCoreRequest",
        "EngineCoreEvent",
        "EngineCoreOutput",
        "UtilityOutput",
        "EngineCoreOutputs",
    ],
    "vllm/sampling_params.py": ["StructuredOutputsParams", "RepetitionDetectionParams", "SamplingParams"],
    "vllm/v1/metrics/stats.py": [
        "BaseCacheStats",
        "PrefixCacheStats",
        "KVCacheEvictionEvent",
        "SchedulerIterationDetails",
        "SchedulerStats",
        "PrefillStats",
    ],
    "vllm/v1/spec_decode/metrics.py": ["SpecDecodingStats"],
    "vllm/compilation/cuda_graph.py": ["CUDAGraphStat"],
    "vllm/v1/metrics/perf.py": ["PerfStats"],
    "vllm/config/kv_events.py": ["KVEventsConfig"],
    "vllm/lora/request.py": ["LoRARequest"],
    "vllm/pooling_params.py": ["LateInteractionParams", "PoolingParams"],
    "vllm/multimodal/inputs.py": ["PlaceholderRange", "MultiModalFeatureSpec"],
    "vllm/v1/engine/utils.py": ["EngineZmqAddresses", "EngineHandshakeMetadata"],
}
ENUM_FILES = {"vllm/sampling_params.py": ["RequestOutputKind"], "vllm/v1/engine/__init__.py": ["FinishReason"]}
HANDSHAKE_FILE = "vllm/v1/engine/core.py"
COORDINATOR_FILE = "vllm/v1/engine/coordinator.py"


# ---------------------------------------------------------------------------------------------------
# Reading the mirror


class Mirror:
    def __init__(self, path: str) -> None:
        self.path = path

    def show(self, rev: str, file: str) -> str | None:
        r = subprocess.run(["git", "-C", self.path, "show", f"{rev}:{file}"], capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else None

    def commit(self, rev: str) -> str:
        return subprocess.run(
            ["git", "-C", self.path, "rev-parse", f"{rev}^{{commit}}"], capture_output=True, text=True, check=True
        ).stdout.strip()

    def blob(self, rev: str, file: str) -> str:
        return subprocess.run(
            ["git", "-C", self.path, "rev-parse", f"{rev}:{file}"], capture_output=True, text=True, check=True
        ).stdout.strip()

    def date(self, rev: str) -> str:
        return subprocess.run(
            ["git", "-C", self.path, "log", "-1", "--format=%cI", rev], capture_output=True, text=True, check=True
        ).stdout.strip()


@dataclass
class FieldDef:
    name: str
    has_default: bool
    default: Any  # a Python value, or a Factory
    annotation: str


@dataclass
class StructDef:
    name: str
    kind: str  # "array" | "sparse" | "dataclass" | "map"
    fields: list[FieldDef]
    file: str
    options: dict[str, Any] = field(default_factory=dict)

    def names(self) -> list[str]:
        return [f.name for f in self.fields]


@dataclass
class Factory:
    """A default_factory default: a fresh list/dict/set or a nested struct with its own defaults."""

    what: str


def _decorator_name(d: ast.expr) -> str:
    if isinstance(d, ast.Call):
        d = d.func
    if isinstance(d, ast.Attribute):
        return d.attr
    if isinstance(d, ast.Name):
        return d.id
    return ""


def _is_classvar(ann: ast.expr) -> bool:
    text = ast.unparse(ann)
    return text.startswith("ClassVar") or text.startswith("typing.ClassVar")


def _eval_default(node: ast.expr, enums: dict[str, dict[str, Any]]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value
    if isinstance(node, ast.List) and not node.elts:
        return Factory("list")  # msgspec copies a mutable `= []` default per instance
    if isinstance(node, ast.Dict) and not node.keys:
        return Factory("dict")
    if isinstance(node, ast.Call) and _decorator_name(node.func) == "field":
        for kw in node.keywords:
            if kw.arg == "default_factory":
                return Factory(ast.unparse(kw.value))
            if kw.arg == "default":
                return _eval_default(kw.value, enums)
        raise ValueError(f"field() without a default: {ast.unparse(node)}")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in enums:
        return enums[node.value.id][node.attr]
    raise ValueError(f"cannot evaluate default {ast.unparse(node)}")


def parse_enums(source: str, names: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name in names:
            members = {}
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                    for t in stmt.targets:
                        if isinstance(t, ast.Name):
                            members[t.id] = stmt.value.value
            out[node.name] = members
    return out


def parse_structs(source: str, file: str, names: list[str], enums: dict[str, dict[str, Any]]) -> dict[str, StructDef]:
    classes = {n.name: n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)}
    out: dict[str, StructDef] = {}

    def build(name: str) -> StructDef:
        if name in out:
            return out[name]
        node = classes[name]
        kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
        bases = [ast.unparse(b) for b in node.bases]
        decorators = {_decorator_name(d) for d in node.decorator_list}
        inherited: list[FieldDef] = []
        for b in bases:
            if b in classes:  # a dataclass base declared in the same file (PrefixCacheStats(BaseCacheStats))
                inherited = list(build(b).fields)
        if "msgspec.Struct" in bases or "Struct" in bases:
            if kw.get("array_like"):
                kind = "array"
            elif kw.get("omit_defaults"):
                kind = "sparse"
            else:
                kind = "map"
        elif decorators & {"dataclass", "config"} or inherited:
            kind = "dataclass"
        else:
            raise ValueError(f"{file}: {name} is neither a msgspec Struct nor a dataclass")
        fields = list(inherited)
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if _is_classvar(stmt.annotation):
                    continue
                has_default = stmt.value is not None
                default = _eval_default(stmt.value, enums) if has_default else None
                fd = FieldDef(stmt.target.id, has_default, default, ast.unparse(stmt.annotation))
                fields = [f for f in fields if f.name != fd.name] + [fd]
        sd = StructDef(name, kind, fields, file, kw)
        out[name] = sd
        return sd

    for n in names:
        if n in classes:
            build(n)
    return {n: out[n] for n in names if n in out}


def parse_handshake_keys(source: str) -> dict[str, list[str]]:
    """Keys of the HELLO and READY dicts, read from EngineCoreProc.startup_handshake/_perform_handshake."""
    keys: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict) and node.keys:
            ks = [k.value for k in node.keys if isinstance(k, ast.Constant)]
            vals = [v.value for v in node.values if isinstance(v, ast.Constant)]
            if ks and ks[0] == "status" and vals and vals[0] in ("HELLO", "READY"):
                keys.setdefault(vals[0], ks)
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            t = node.targets[0]
            if ast.unparse(t.value) == "ready_msg" and isinstance(t.slice, ast.Constant):
                keys.setdefault("READY_OPTIONAL", []).append(t.slice.value)
    return keys


def parse_request_counts(source: str) -> list[Any]:
    """EngineState.request_counts' initial value: one engine's entry of the coordinator's publish."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == "EngineState":
            for stmt in ast.walk(node):
                target = stmt.target if isinstance(stmt, ast.AnnAssign) else (
                    stmt.targets[0] if isinstance(stmt, ast.Assign) else None
                )
                if isinstance(target, ast.Attribute) and target.attr == "request_counts":
                    return ast.literal_eval(stmt.value)
    raise ValueError("EngineState.request_counts not found")


class Revision:
    def __init__(self, mirror: Mirror, version: str, rev: str, label: str) -> None:
        self.version, self.rev, self.label = version, rev, label
        self.commit = mirror.commit(rev)
        self.date = mirror.date(rev)
        self.structs: dict[str, StructDef] = {}
        self.blobs: dict[str, str] = {}
        enums: dict[str, dict[str, Any]] = {}
        for file, names in ENUM_FILES.items():
            enums.update(parse_enums(mirror.show(rev, file) or "", names))
        for file, names in STRUCT_FILES.items():
            source = mirror.show(rev, file)
            if source is None:
                raise SystemExit(f"{rev}: {file} not found in the mirror")
            self.blobs[file] = mirror.blob(rev, file)
            self.structs.update(parse_structs(source, file, names, enums))
        core = mirror.show(rev, HANDSHAKE_FILE) or ""
        self.blobs[HANDSHAKE_FILE] = mirror.blob(rev, HANDSHAKE_FILE)
        self.handshake = parse_handshake_keys(core)
        self.blobs[COORDINATOR_FILE] = mirror.blob(rev, COORDINATOR_FILE)
        self.request_counts = parse_request_counts(mirror.show(rev, COORDINATOR_FILE) or "")

    def struct(self, name: str) -> StructDef:
        return self.structs[name]


# ---------------------------------------------------------------------------------------------------
# Values and the encoder


class S:
    """A struct value in a sample: the struct's name and its values by wire name."""

    def __init__(self, name: str, **values: Any) -> None:
        self.name = name
        self.values = values


_packer = msgpack.Packer(use_bin_type=True, use_single_float=False, autoreset=True)


def _default_of(rev: Revision, f: FieldDef) -> Any:
    d = f.default
    if isinstance(d, Factory):
        if d.what in ("list", "set"):
            return []
        if d.what == "dict":
            return {}
        if d.what in rev.structs:
            return S(d.what)
        raise ValueError(f"unknown default_factory {d.what}")
    return d


class Encoder:
    """msgspec's encoding of vLLM values for one revision (see the module docstring)."""

    def __init__(self, rev: Revision) -> None:
        self.rev = rev
        self.out = bytearray()

    def encode(self, v: Any) -> bytes:
        self.out = bytearray()
        self.value(v)
        return bytes(self.out)

    def value(self, v: Any) -> None:
        if isinstance(v, S):
            self.struct(v)
        elif isinstance(v, msgpack.ExtType):
            self.out += _packer.pack(v)  # a namedtuple, but an ext on the wire
        elif isinstance(v, (list, tuple, set, frozenset)):
            items = list(v)
            self.out += _packer.pack_array_header(len(items))
            for x in items:
                self.value(x)
        elif isinstance(v, dict):
            self.out += _packer.pack_map_header(len(v))
            for k, x in v.items():
                self.value(k)
                self.value(x)
        else:
            # None, bool, int, float, str, bytes, msgpack.ExtType
            self.out += _packer.pack(v)

    def struct(self, v: S) -> None:
        sd = self.rev.struct(v.name)
        known = set(sd.names())
        for k in v.values:
            if k not in known and not any(k in r.struct(v.name).names() for r in ALL_REVISIONS if v.name in r.structs):
                raise ValueError(f"{v.name} has no field {k} in any revision")
        if sd.kind == "array":
            self.out += _packer.pack_array_header(len(sd.fields))
            for f in sd.fields:
                self.value(self._field_value(sd, f, v))
        elif sd.kind == "sparse":
            present = [f for f in sd.fields if f.name in v.values]
            n = len(sd.fields)
            if n < 16:
                self.out.append(0x80 | len(present))
            else:
                self.out += b"\xde" + len(present).to_bytes(2, "big")
            for f in present:
                self.value(f.name)
                self.value(v.values[f.name])
        else:  # dataclass or plain Struct: every field
            self.out += _packer.pack_map_header(len(sd.fields))
            for f in sd.fields:
                self.value(f.name)
                self.value(self._field_value(sd, f, v))

    def _field_value(self, sd: StructDef, f: FieldDef, v: S) -> Any:
        if f.name in v.values:
            return v.values[f.name]
        if not f.has_default:
            raise ValueError(f"{sd.name}.{f.name} is required at {self.rev.rev} but the sample has no value")
        return _default_of(self.rev, f)


def view_of(rev: Revision, v: Any) -> Any:
    """The JSON view of a value as the revision's decoder sees it: structs as {wire name: value} with
    exactly the revision's fields (defaults filled in for array and dataclass structs, only the keys
    written for omit_defaults structs)."""
    if isinstance(v, S):
        sd = rev.struct(v.name)
        if sd.kind == "sparse":
            return {f.name: view_of(rev, v.values[f.name]) for f in sd.fields if f.name in v.values}
        out = {}
        for f in sd.fields:
            val = v.values[f.name] if f.name in v.values else _default_of(rev, f)
            out[f.name] = view_of(rev, val)
        return out
    if isinstance(v, (list, tuple, set, frozenset)):
        return [view_of(rev, x) for x in v]
    if isinstance(v, dict):
        return {str(k): view_of(rev, x) for k, x in v.items()}
    if isinstance(v, bytes):
        return {"bin": v.hex()}
    return v


def layouts_of(rev: Revision, v: Any, acc: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Field lists of every struct used in a value, as declared at the revision."""
    acc = {} if acc is None else acc
    if isinstance(v, S):
        sd = rev.struct(v.name)
        acc[v.name] = sd.names()
        for f in sd.fields:
            if f.name in v.values:
                layouts_of(rev, v.values[f.name], acc)
            elif f.has_default:
                layouts_of(rev, _default_of(rev, f), acc)
    elif isinstance(v, (list, tuple)):
        for x in v:
            layouts_of(rev, x, acc)
    elif isinstance(v, dict):
        for x in v.values():
            layouts_of(rev, x, acc)
    return acc


# ---------------------------------------------------------------------------------------------------
# Samples (illustrative values; the same for every revision)

TIMESTAMP = 1234.5


def sample_step_outputs() -> S:
    """A step with three outputs: a request's first output (events, prefill stats, trace headers), a
    running one (NaN count, EC transfer params where the revision has them) and a finished one."""
    first = S(
        "EngineCoreOutput",
        request_id="chatcmpl-a-1",
        new_token_ids=[9707],
        events=[S("EngineCoreEvent", type=1, timestamp=100.5), S("EngineCoreEvent", type=2, timestamp=100.625)],
        trace_headers={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
        prefill_stats=S(
            "PrefillStats",
            num_prompt_tokens=9,
            num_computed_tokens=5,
            num_cached_tokens=4,
            num_local_cached_tokens=4,
            num_external_cached_tokens=0,
            num_cache_creation_tokens=3,
        ),
    )
    running = S(
        "EngineCoreOutput",
        request_id="chatcmpl-b-2",
        new_token_ids=[13, 198],
        ec_transfer_params={"mm_hash": "img-7f3a", "encoder_output_len": 576},
        num_nans_in_logits=2,
    )
    finished = S(
        "EngineCoreOutput",
        request_id="chatcmpl-c-3",
        new_token_ids=[151645],
        finish_reason=0,
        stop_reason=151645,
        kv_transfer_params={"do_remote_prefill": False, "remote_block_ids": [1, 2, 3], "remote_host": "10.0.0.2"},
    )
    return S(
        "EngineCoreOutputs",
        engine_index=0,
        outputs=[first, running, finished],
        timestamp=TIMESTAMP,
        finished_requests=["chatcmpl-c-3"],
    )


def sample_scheduler_stats() -> S:
    return S(
        "SchedulerStats",
        num_running_reqs=3,
        num_waiting_reqs=1,
        num_skipped_waiting_reqs=0,
        step_counter=42,
        current_wave=0,
        kv_cache_usage=0.375,
        iteration_details=S(
            "SchedulerIterationDetails",
            iteration_index=42,
            num_ctx_requests=1,
            num_ctx_tokens=512,
            num_generation_requests=2,
            num_generation_tokens=2,
            elapsed_ms=12.5,
        ),
        prefix_cache_stats=S("PrefixCacheStats", requests=1, queries=512, hits=256),
        kv_cache_eviction_events=[
            S("KVCacheEvictionEvent", lifetime_seconds=12.5, idle_seconds=3.25, reuse_gaps_seconds=(0.5, 1.75))
        ],
        spec_decoding_stats=S(
            "SpecDecodingStats",
            num_spec_tokens=3,
            num_drafts=2,
            num_draft_tokens=6,
            num_accepted_tokens=4,
            num_accepted_tokens_per_pos=[2, 1, 1],
            num_draft_tokens_per_pos=[2, 2, 2],
        ),
        running_lora_adapters={"sql-lora": 2},
        cudagraph_stats=S(
            "CUDAGraphStat", num_unpadded_tokens=3, num_padded_tokens=4, num_paddings=1, runtime_mode="FULL"
        ),
    )


def sample_stats_outputs() -> S:
    return S(
        "EngineCoreOutputs",
        engine_index=1,
        outputs=[S("EngineCoreOutput", request_id="chatcmpl-d-4", new_token_ids=[2])],
        scheduler_stats=sample_scheduler_stats(),
        timestamp=2000.25,
    )


def sample_utility_success() -> S:
    return S(
        "EngineCoreOutputs",
        utility_output=S("UtilityOutput", call_id=7, result=[None, True]),
        timestamp=TIMESTAMP,
    )


def sample_utility_missing_method() -> S:
    # What EngineCoreProc._invoke_utility_method replies when getattr(self, method_name) fails: the
    # lookup runs inside its try, so the AttributeError becomes the failure message.
    return S(
        "EngineCoreOutputs",
        utility_output=S(
            "UtilityOutput",
            call_id=8,
            failure_message="Call to get_weight_version method failed: "
            "'EngineCoreProc' object has no attribute 'get_weight_version'",
        ),
        timestamp=TIMESTAMP,
    )


def sample_registration(version: str) -> S:
    # Same values as the pin's real-msgspec vector input.registration_typical.
    reported = {"0.23": "0.23.0", "0.24": "0.24.0", "0.25": "0.25.1"}.get(version, "0.26.0.dev0")
    return S(
        "EngineCoreReadyResponse",
        max_model_len=8192,
        num_gpu_blocks=27000,
        block_size=16,
        dp_stats_address=None,
        dtype="bfloat16",
        vllm_version=reported,
        world_size=1,
        data_parallel_size=1,
        tensor_parallel_size=1,
        pipeline_parallel_size=1,
        decode_context_parallel_size=1,
        data_parallel_rank=0,
        max_num_seqs=256,
        max_num_batched_tokens=8192,
        instance_id="a1b2c3d4",
        kv_cache_size_tokens=432000,
        kv_cache_max_concurrency=52.73,
        kv_events_config=None,
    )


def sample_registration_kv_events() -> S:
    # DP rank 1 of 2 with KV events on (the pin's vector input.registration has the same KVEventsConfig).
    return S(
        "EngineCoreReadyResponse",
        max_model_len=32768,
        num_gpu_blocks=1000,
        block_size=16,
        dp_stats_address="tcp://10.0.0.1:5570",
        dtype="float16",
        vllm_version="0.26.0.dev0",
        world_size=2,
        data_parallel_size=2,
        tensor_parallel_size=2,
        pipeline_parallel_size=1,
        decode_context_parallel_size=1,
        data_parallel_rank=1,
        max_num_seqs=128,
        max_num_batched_tokens=4096,
        instance_id="test-instance",
        kv_cache_size_tokens=None,
        kv_cache_max_concurrency=None,
        kv_events_config=S(
            "KVEventsConfig",
            enable_kv_cache_events=True,
            publisher="zmq",
            endpoint="tcp://127.0.0.1:5557",
            replay_endpoint="tcp://127.0.0.1:5558",
            buffer_steps=10000,
            hwm=100000,
            max_queue_size=100000,
            topic="kv",
        ),
    )


def sample_request(session_id: str | None = None) -> S:
    # Same values as the pin's real-msgspec vector request.chat_typical_python: SamplingParams keys are
    # those a Python frontend writes after __post_init__ + update_from_generation_config (identity-based
    # omit_defaults keeps stop=[], bad_words=[] and skip_reading_prefix_cache=False). Every revision's
    # __post_init__ produces the same key set for these values (checked against each tag's source:
    # thinking_token_budget stays None, stream_interval is not set).
    values: dict[str, Any] = dict(
        request_id="chatcmpl-abc123-1a2b3c4d",
        prompt_token_ids=[151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198],
        mm_features=None,
        sampling_params=S(
            "SamplingParams",
            temperature=0.7,
            top_p=0.9,
            stop=[],
            stop_token_ids=[151643],
            max_tokens=128,
            output_kind=1,
            _eos_token_id=151645,
            _all_stop_token_ids=[151643, 151645],
            bad_words=[],
            skip_reading_prefix_cache=False,
        ),
        pooling_params=None,
        arrival_time=1754000000.25,
        lora_request=None,
        cache_salt=None,
        data_parallel_rank=None,
        external_req_id="chatcmpl-abc123",
    )
    if session_id is not None:
        values["session_id"] = session_id
    return S("EngineCoreRequest", **values)


# ---------------------------------------------------------------------------------------------------
# Vectors


def provenance(rev: Revision, files: list[str]) -> dict[str, Any]:
    return {
        "vllm_revision": rev.rev,
        "vllm_commit": rev.commit,
        "vllm_commit_date": rev.date,
        "files": {f: rev.blobs[f] for f in files},
        "how": (
            "built by packages/protocol/scripts/gen-version-vectors.py: field lists parsed with ast from "
            "these files at this commit, encoded with msgspec's rules (array_like = every field; "
            "omit_defaults map = written keys, map16 header from 16 declared fields; dataclass = every field) "
            "and packed with msgpack-python 1.0.3. Not produced by msgspec (it cannot be installed here); the "
            "same encoder reproduces every real-msgspec pin vector of test/vectors/vectors.json byte for byte "
            "(see about.msgspec_check)."
        ),
    }


def files_of(rev: Revision, layouts: dict[str, list[str]]) -> list[str]:
    return sorted({rev.struct(n).file for n in layouts})


def make_vector(rev: Revision, name: str, kind: str, value: Any, description: str, frames_prefix=None) -> dict:
    enc = Encoder(rev)
    payload = enc.encode(value)
    layouts = layouts_of(rev, value)
    frames = ([frames_prefix] if frames_prefix is not None else []) + [payload]
    return {
        "name": name,
        "kind": kind,
        "version": rev.version,
        "description": description,
        "frames_hex": [f.hex() for f in frames],
        "decoded": view_of(rev, value),
        "layouts": layouts,
        "provenance": provenance(rev, files_of(rev, layouts)),
    }


def handshake_vector(rev: Revision, name: str, msg: dict[str, Any], description: str) -> dict:
    base = rev.handshake[msg["status"]]
    optional = rev.handshake.get("READY_OPTIONAL", []) if msg["status"] == "READY" else []
    allowed = base + optional
    if list(msg) != base + [k for k in optional if k in msg]:
        raise ValueError(f"{name}: keys {list(msg)} do not follow {allowed} at {rev.rev}")
    payload = Encoder(rev).encode(msg)
    return {
        "name": name,
        "kind": "handshake_status",
        "version": rev.version,
        "description": description,
        "frames_hex": [payload.hex()],
        "decoded": msg,
        "layouts": {"HandshakeStatus": allowed},
        "provenance": {
            **provenance(rev, [HANDSHAKE_FILE]),
            "how": "plain dict written by EngineCoreProc.startup_handshake / _perform_handshake "
            "(keys read from those functions with ast), packed with msgpack-python 1.0.3 as "
            "msgspec.msgpack.encode packs a dict (insertion order).",
        },
    }


def coordinator_publish_vector(rev: Revision) -> dict:
    # DPCoordinatorProc.process_input_socket: msgspec.msgpack.encode((engine_req_counts_list,
    # current_wave, engines_running)); each entry has EngineState.request_counts' shape.
    template = rev.request_counts
    samples = [[2, 1, 0.25], [0, 3, 0.5]]
    counts = [[type(t)(x) for t, x in zip(template, sample)] for sample in samples]
    msg = (counts, 3, True)
    return {
        "name": "coordinator.publish_counts",
        "kind": "coordinator_publish",
        "version": rev.version,
        "description": f"DP coordinator -> frontends publish (counts, wave, engines_running) for 2 engines; "
        f"each count entry has {len(template)} elements ([waiting, running"
        + (", kv_cache_usage" if len(template) > 2 else "")
        + "]).",
        "frames_hex": [Encoder(rev).encode(msg).hex()],
        "decoded": {"counts": counts, "wave": 3, "engines_running": True},
        "layouts": {"EngineLoadCounts": ["waiting", "running", "kv_cache_usage"][: len(template)]},
        "provenance": {
            **provenance(rev, [COORDINATOR_FILE]),
            "how": "the publish tuple of DPCoordinatorProc (entry shape read with ast from EngineState.request_counts), "
            "packed with msgpack-python 1.0.3 as msgspec.msgpack.encode packs a tuple of lists.",
        },
    }


def vectors_for(rev: Revision) -> list[dict]:
    v = rev.version
    out = [
        make_vector(
            rev,
            "outputs.step",
            "outputs",
            sample_step_outputs(),
            "EngineCoreOutputs of one step with three outputs: a first output (events QUEUED/SCHEDULED, "
            "trace headers, PrefillStats), a running one with num_nans_in_logits=2 (and ec_transfer_params "
            "where the revision has the field) and one finished with STOP and kv_transfer_params; "
            f"finished_requests is a set. Each EngineCoreOutput is an array of all {len(rev.struct('EngineCoreOutput').fields)} fields.",
        ),
        make_vector(
            rev,
            "outputs.stats",
            "outputs",
            sample_stats_outputs(),
            "EngineCoreOutputs carrying SchedulerStats (a dataclass map of all its fields: PrefixCacheStats, "
            "a KVCacheEvictionEvent, SpecDecodingStats, CUDAGraphStat, LoRA adapter counts"
            + (", SchedulerIterationDetails" if "iteration_details" in rev.struct("SchedulerStats").names() else "")
            + ") next to one running output.",
        ),
        make_vector(
            rev,
            "outputs.utility_success",
            "outputs",
            sample_utility_success(),
            "Utility reply: EngineCoreOutputs(utility_output=UtilityOutput(call_id=7, result=UtilityResult(True))); "
            "UtilityResult travels as [type_info=None, value].",
        ),
        make_vector(
            rev,
            "stats.scheduler_stats",
            "scheduler_stats",
            sample_scheduler_stats(),
            f"SchedulerStats on its own: a map of {len(rev.struct('SchedulerStats').fields)} keys "
            f"({'map16' if len(rev.struct('SchedulerStats').fields) >= 16 else 'fixmap'}).",
        ),
        make_vector(
            rev,
            "registration.typical",
            "registration",
            sample_registration(v),
            f"Input-socket registration (EngineCoreReadyResponse dataclass, msgspec.msgpack.encode in "
            f"process_input_sockets): {len(rev.struct('EngineCoreReadyResponse').fields)} keys.",
        ),
        make_vector(
            rev,
            "request.chat",
            "request",
            sample_request(),
            f"ADD of a typical streaming chat request as a Python frontend of this revision writes it: "
            f"EngineCoreRequest array of {len(rev.struct('EngineCoreRequest').fields)} elements, SamplingParams "
            f"omit_defaults map ({len(rev.struct('SamplingParams').fields)} declared fields -> map16).",
            frames_prefix=b"\x00",
        ),
        handshake_vector(
            rev,
            "handshake.hello",
            {"status": "HELLO", "local": True, "headless": False},
            "HELLO from a local engine (engine -> frontend handshake ROUTER).",
        ),
        handshake_vector(
            rev,
            "handshake.ready_dp_gt1",
            {"status": "READY", "local": False, "headless": True, "parallel_config_hash": "0123456789abcdef"},
            "READY of a headless engine with data_parallel_size > 1 (parallel_config_hash added).",
        ),
    ]
    out.append(coordinator_publish_vector(rev))
    if "get_weight_version" not in CORE_METHODS[rev.rev]:
        out.append(
            make_vector(
                rev,
                "outputs.utility_missing_method",
                "outputs",
                sample_utility_missing_method(),
                "Reply of this revision's engine to get_weight_version, which it does not have: the getattr "
                "runs inside _invoke_utility_method's try, so the AttributeError comes back as failure_message.",
            )
        )
    if "kv_events_config" in rev.struct("EngineCoreReadyResponse").names():
        out.append(
            make_vector(
                rev,
                "registration.dp_rank1_kv_events",
                "registration",
                sample_registration_kv_events(),
                "Registration of DP rank 1 of 2 (TP 2) with KV cache events on: kv_events_config is a "
                "KVEventsConfig (@config dataclass -> map of its 8 fields); kv_cache_* are None.",
            )
        )
    if "session_id" in rev.struct("EngineCoreRequest").names():
        out.append(
            make_vector(
                rev,
                "request.chat_with_session",
                "request",
                sample_request(session_id="session-42"),
                "The same ADD with session_id set (#48048): EngineCoreRequest array of 21 elements.",
                frames_prefix=b"\x00",
            )
        )
    return out


# ---------------------------------------------------------------------------------------------------
# Utility methods present per revision (for the utility_missing_method vector)

CORE_METHODS: dict[str, set[str]] = {}


def core_methods(mirror: Mirror, rev: str) -> set[str]:
    tree = ast.parse(mirror.show(rev, HANDSHAKE_FILE) or "")
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in ("EngineCore", "EngineCoreProc", "DPEngineCoreProc"):
            names |= {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return names


# ---------------------------------------------------------------------------------------------------
# Self-check against real msgspec at the pin


def _annotation_structs(rev: Revision, ann: str) -> list[str]:
    import re

    return [n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", ann) if n in rev.structs]


def retype(rev: Revision, name: str, raw: Any) -> S:
    """Turn an unpacked msgpack value back into a struct value of the pin's declared types."""
    sd = rev.struct(name)
    values: dict[str, Any] = {}
    if sd.kind == "array":
        if not isinstance(raw, list) or len(raw) != len(sd.fields):
            raise ValueError(f"{name}: expected an array of {len(sd.fields)}")
        pairs = list(zip(sd.fields, raw))
    else:
        by_name = {f.name: f for f in sd.fields}
        pairs = [(by_name[k], x) for k, x in raw.items()]
    for f, x in pairs:
        values[f.name] = _retype_value(rev, f.annotation, x)
    return S(name, **values)


def _retype_value(rev: Revision, ann: str, x: Any) -> Any:
    names = _annotation_structs(rev, ann)
    if x is None or not names:
        return x
    inner = names[0]
    if ann.startswith(("list[", "set[")) or (isinstance(x, list) and rev.struct(inner).kind != "array"):
        return [retype(rev, inner, e) for e in x]
    return retype(rev, inner, x)


def msgspec_check(pin: Revision) -> dict[str, Any]:
    data = json.loads(PIN_VECTORS.read_text())
    checked, skipped = [], []
    top = {
        "output.": "EngineCoreOutputs",
        "coordinator.wave_complete_from_engine": "EngineCoreOutputs",
        "coordinator.start_wave_from_engine": "EngineCoreOutputs",
        "coordinator.request_counts_from_engine": "EngineCoreOutputs",
        "coordinator.publish_counts": "dict",
        "coordinator.publish_wave_state": "dict",
        "request.": "EngineCoreRequest",
        "input.add_request": "EngineCoreRequest",
        "input.registration": "EngineCoreReadyResponse",
        "handshake.ready": "dict",
        "handshake.hello": "dict",
    }
    for vec in data["vectors"]:
        name = vec["name"]
        struct = next((t for p, t in top.items() if name.startswith(p)), None)
        mirror_structs = name.startswith("python_compat") or "mirror" in vec.get("provenance_note", "").lower()
        if vec.get("provenance") != "msgspec-real" or struct is None or mirror_structs:
            skipped.append(name)
            continue
        frames = [bytes.fromhex(h) for h in vec["frames_hex"]]
        if struct == "EngineCoreRequest":
            payload = frames[frames.index(b"\x00") + 1]  # after the request-type frame
        elif struct in ("dict", "EngineCoreReadyResponse"):
            payload = frames[-1]  # after the ROUTER-side identity
        else:
            payload = frames[0]  # EngineCoreOutputs (later frames are aux buffers)
        raw = msgpack.unpackb(payload, raw=False, strict_map_key=False, use_list=True)
        value = raw if struct == "dict" else retype(pin, struct, raw)
        again = Encoder(pin).encode(value)
        if again != payload:
            raise SystemExit(f"msgspec check FAILED for {name}:\n real {payload.hex()}\n ours {again.hex()}")
        checked.append(name)
    return {"vectors_file": "test/vectors/vectors.json", "identical": checked, "not_applicable": skipped}


def check_samples_against_pin(pin: Revision) -> list[str]:
    data = {v["name"]: v for v in json.loads(PIN_VECTORS.read_text())["vectors"]}
    pairs = [
        ("request.chat_typical_python", Encoder(pin).encode(sample_request()), 2),
        ("input.registration_typical", Encoder(pin).encode(sample_registration("main")), 1),
    ]
    for name, ours, idx in pairs:
        real = bytes.fromhex(data[name]["frames_hex"][idx])
        if real != ours:
            raise SystemExit(f"sample check FAILED for {name}:\n real {real.hex()}\n ours {ours.hex()}")
    return [p[0] for p in pairs]


ALL_REVISIONS: list[Revision] = []


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default=DEFAULT_MIRROR)
    args = ap.parse_args()
    mirror = Mirror(args.mirror)
    for version, rev, label in REVISIONS:
        ALL_REVISIONS.append(Revision(mirror, version, rev, label))
        CORE_METHODS[rev] = core_methods(mirror, rev)
    pin = next(r for r in ALL_REVISIONS if r.version == "main")
    check = msgspec_check(pin)
    check["samples_equal_to_real_vectors"] = check_samples_against_pin(pin)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for rev in ALL_REVISIONS:
        doc = {
            "about": {
                "version": rev.version,
                "label": rev.label,
                "vllm_revision": rev.rev,
                "vllm_commit": rev.commit,
                "vllm_commit_date": rev.date,
                "generator": "packages/protocol/scripts/gen-version-vectors.py (msgpack-python "
                + ".".join(map(str, msgpack.version))
                + ", Python "
                + sys.version.split()[0]
                + ")",
                "real_msgspec": False,
                "struct_fields": {n: sd.names() for n, sd in sorted(rev.structs.items())},
                "struct_fields_note": "every struct's fields in declaration order at this revision, parsed with ast",
                "engine_methods": sorted(m for m in CORE_METHODS[rev.rev] if not m.startswith("_")),
                "engine_methods_note": "public methods of EngineCore, EngineCoreProc and DPEngineCoreProc in "
                "vllm/v1/engine/core.py at this revision (what a utility call can reach by getattr)",
                "msgspec_check": check,
                "format": "Each vector: name, kind (outputs | scheduler_stats | registration | request | "
                "handshake_status), version, frames_hex (what the decoder is given: the payload; requests "
                "are [request type 0x00, payload]), decoded (wire names; structs as {field: value} with "
                "exactly the fields this revision declares), layouts (the declared field order of every "
                "struct in the message at this revision), provenance.",
            },
            "vectors": vectors_for(rev),
        }
        name = rev.rev if rev.rev.startswith("v") else f"{rev.version}-{rev.commit[:9]}"
        path = OUT_DIR / f"{name}.json"
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {path.relative_to(PACKAGE)} ({len(doc['vectors'])} vectors)")
    print(f"msgspec check: {len(check['identical'])} real-msgspec pin vectors re-encoded byte for byte")


if __name__ == "__main__":
    main()
