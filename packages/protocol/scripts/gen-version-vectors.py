#!/usr/bin/env python3
"""Build the per-version wire vectors in test/vectors/versions/ with real msgspec, from each vLLM tag's structs.

For every revision the script reads the struct bodies out of the vLLM mirror (`git show <rev>:<path>`),
parses them with `ast` (annotated assignments in class order, their defaults and `field(...)` options,
the struct options from the class keywords — array_like, omit_defaults, gc, dict, tag …, dataclass-ness
and flavour from the decorators: stdlib `dataclasses.dataclass`, pydantic's `dataclass`, vLLM's `@config`
(a pydantic dataclass with extra="forbid"), NamedTuples, Enums/IntEnums, Literal aliases) and BUILDS REAL
CLASSES from them at run time: `msgspec.defstruct(...)` with the tag's options, stdlib or pydantic
dataclasses, NamedTuples, enums, every annotation evaluated to the real type. The sample values below
become instances of those classes and are encoded by `msgspec.msgpack.Encoder`, with an `enc_hook` that
follows vLLM's `MsgpackEncoder` (vllm/v1/serial_utils.py): numpy arrays and tensors as
`(dtype, shape, data)` with data an ext-3 raw view below 256 bytes or the index of an aux frame,
`UtilityResult` as `(None, result)`, slices as tuples. Nothing is encoded by hand.

Each vector is then decoded back by `msgspec.msgpack.Decoder(<top type>)` built from the same classes,
with vLLM's `MsgpackDecoder` ext_hook (only ext type 3) and dec_hook (ndarray, tensor, UtilityResult), and
re-encoded: the bytes must come back unchanged. That is the proof that the vector is a message the tag's
engine (or frontend) decodes. The field lists (`about.struct_fields`) still come from the same ast parse.

Self-check (always on): every vector of test/vectors/vectors.json that real msgspec 0.19 produced from
vLLM's own structs at the pin is decoded with the pin's rebuilt classes and re-encoded by this msgspec;
all of them must come out byte for byte identical (so the rebuilt classes are the pin's and this msgspec
writes what 0.19 wrote). The pin's request and registration samples must equal the real vectors they
were copied from. Files that were generated before are compared vector by vector and the differences
printed (the newly encoded bytes win).

Usage (msgspec, pydantic and numpy are on the local PyPI mirror; use a throwaway venv):
    python3 -m venv /tmp/msgspec-venv && /tmp/msgspec-venv/bin/pip install msgspec numpy pydantic
    /tmp/msgspec-venv/bin/python packages/protocol/scripts/gen-version-vectors.py [--mirror PATH]
Writes packages/protocol/test/vectors/versions/<revision>.json. Tests never run this script.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import collections.abc
import dataclasses
import enum
import json
import re
import subprocess
import sys
import types
import typing
from dataclasses import dataclass, field
from importlib.metadata import version as dist_version
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pydantic
import pydantic.dataclasses

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
OUT_DIR = PACKAGE / "test" / "vectors" / "versions"
PIN_VECTORS = PACKAGE / "test" / "vectors" / "vectors.json"
DEFAULT_MIRROR = "/work/.mirror/aoshen02+vllm/repo"
MSGSPEC = f"msgspec {msgspec.__version__}"

# (codec version id, git revision, label). The ids are the ones packages/protocol/src/versions uses.
REVISIONS = [
    ("0.22", "v0.22.1", "vLLM v0.22.1 (v0.22.0 has the same structs)"),
    ("0.23", "v0.23.0", "vLLM v0.23.0"),
    ("0.24", "v0.24.0", "vLLM v0.24.0"),
    ("0.25", "v0.25.1", "vLLM v0.25.1 (v0.25.0 has the same structs)"),
    ("main", "c67fe497a25d5af10a6ca0be9d18bcdd42cac4f1", "vLLM main at the pin c67fe497"),
    ("next", "58d3918e3ea0a544ffedadad2ba84559e9c51d8f", "upstream main after the pin (58d3918e3, 2026-08-08)"),
]

# Where each struct is declared (the same path in every revision); listed in about.struct_fields.
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
    "vllm/v1/outputs.py": ["LogprobsLists", "LogprobsTensors"],
}
# Types the structs' annotations need to decode, built the same way but not listed in struct_fields.
SUPPORT_FILES = {
    "vllm/v1/metrics/perf.py": ["DebugPerfStats"],
}
ENUM_FILES = {
    "vllm/sampling_params.py": ["RequestOutputKind"],
    "vllm/v1/engine/__init__.py": ["FinishReason", "EngineCoreEventType"],
}
# Module-level aliases (`PoolingTask = Literal[...]`).
ALIAS_FILES = {"vllm/tasks.py": ["PoolingTask"]}
HANDSHAKE_FILE = "vllm/v1/engine/core.py"
COORDINATOR_FILE = "vllm/v1/engine/coordinator.py"
SERIAL_FILE = "vllm/v1/serial_utils.py"


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
class Factory:
    """A default_factory default: list, dict, set or a class (a nested struct with its own defaults)."""

    what: str


@dataclass
class FieldDef:
    name: str
    has_default: bool
    default: Any  # a Python value, or a Factory
    annotation: str
    init: bool = True  # dataclasses.field(init=False)


@dataclass
class StructDef:
    name: str
    kind: str  # wire form: "array" | "sparse" | "map" (msgspec Structs), "dataclass", "namedtuple"
    fields: list[FieldDef]  # every field, base classes' first (as msgspec encodes them)
    file: str
    options: dict[str, Any] = field(default_factory=dict)  # msgspec Struct class keywords
    own: list[FieldDef] = field(default_factory=list)  # the fields this class body declares
    base: str | None = None  # a dataclass base declared in the same file
    flavour: str = ""  # dataclasses: "stdlib" | "pydantic" | "config"
    decorator_options: dict[str, Any] = field(default_factory=dict)

    def names(self) -> list[str]:
        return [f.name for f in self.fields]


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


def _eval_default(node: ast.expr, enums: dict[str, dict[str, Any]]) -> tuple[Any, bool]:
    """(default, init) of a class-body default: a literal, an enum member, [] / {}, or field(...)."""
    if isinstance(node, ast.Constant):
        return node.value, True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value, True
    if isinstance(node, ast.List) and not node.elts:
        return Factory("list"), True  # msgspec copies a mutable `= []` default per instance
    if isinstance(node, ast.Dict) and not node.keys:
        return Factory("dict"), True
    if isinstance(node, ast.Call) and _decorator_name(node.func) == "field":
        init = True
        value: Any = None
        found = False
        for kw in node.keywords:
            if kw.arg == "init":
                init = bool(ast.literal_eval(kw.value))
            elif kw.arg == "default_factory":
                value, found = Factory(ast.unparse(kw.value)), True
            elif kw.arg == "default":
                value, found = _eval_default(kw.value, enums)[0], True
        if not found:
            raise ValueError(f"field() without a default: {ast.unparse(node)}")
        return value, init
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in enums:
        return EnumMember(node.value.id, node.attr), True
    raise ValueError(f"cannot evaluate default {ast.unparse(node)}")


@dataclass(frozen=True)
class EnumMember:
    """An enum member as a default (resolved to the built enum's member)."""

    enum: str
    member: str


@dataclass
class EnumDef:
    name: str
    base: str  # "Enum" | "IntEnum"
    members: dict[str, Any]


def parse_enums(source: str, names: list[str]) -> dict[str, EnumDef]:
    out: dict[str, EnumDef] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name in names:
            members = {}
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
                    for t in stmt.targets:
                        if isinstance(t, ast.Name):
                            members[t.id] = stmt.value.value
            bases = {ast.unparse(b).split(".")[-1] for b in node.bases}
            base = "IntEnum" if "IntEnum" in bases else "Enum"
            if not bases & {"IntEnum", "Enum"}:
                raise ValueError(f"{node.name}: not an Enum")
            out[node.name] = EnumDef(node.name, base, members)
    return out


def parse_aliases(source: str, names: list[str]) -> dict[str, str]:
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in names:
                out[node.targets[0].id] = ast.unparse(node.value)
    return out


def _dataclass_flavour(tree: ast.Module, decorators: list[ast.expr]) -> tuple[str, dict[str, Any]] | None:
    """'stdlib' / 'pydantic' / 'config' for a dataclass decorator list (None: not a dataclass)."""
    pydantic_names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "pydantic.dataclasses":
            pydantic_names |= {a.asname or a.name for a in node.names if a.name == "dataclass"}
    for d in decorators:
        name = _decorator_name(d)
        options = (
            {k.arg: ast.literal_eval(k.value) for k in d.keywords if k.arg is not None}
            if isinstance(d, ast.Call)
            else {}
        )
        text = ast.unparse(d.func if isinstance(d, ast.Call) else d)
        if name == "config":
            return "config", options
        if name == "dataclass":
            if text in pydantic_names or text.startswith("pydantic"):
                return "pydantic", options
            return "stdlib", options
    return None


def parse_structs(source: str, file: str, names: list[str], enums: dict[str, EnumDef]) -> dict[str, StructDef]:
    tree = ast.parse(source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    enum_members = {n: e.members for n, e in enums.items()}
    out: dict[str, StructDef] = {}

    def build(name: str) -> StructDef:
        if name in out:
            return out[name]
        node = classes[name]
        kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
        bases = [ast.unparse(b) for b in node.bases]
        flavour = _dataclass_flavour(tree, node.decorator_list)
        base = next((b for b in bases if b in classes), None)
        inherited = list(build(base).fields) if base is not None else []
        if "msgspec.Struct" in bases or "Struct" in bases:
            kind = "array" if kw.get("array_like") else "sparse" if kw.get("omit_defaults") else "map"
        elif "NamedTuple" in bases or "typing.NamedTuple" in bases:
            kind = "namedtuple"
        elif flavour is not None or inherited:
            kind = "dataclass"
            if flavour is None:
                raise ValueError(f"{file}: {name} subclasses a dataclass without being decorated")
        else:
            raise ValueError(f"{file}: {name} is neither a msgspec Struct, a NamedTuple nor a dataclass")
        own: list[FieldDef] = []
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                if _is_classvar(stmt.annotation):
                    continue
                has_default = stmt.value is not None
                default, init = _eval_default(stmt.value, enum_members) if has_default else (None, True)
                own.append(FieldDef(stmt.target.id, has_default, default, ast.unparse(stmt.annotation), init))
        # A redeclared field keeps its base position (dataclasses), with the subclass's definition.
        fields = [next((o for o in own if o.name == f.name), f) for f in inherited]
        fields += [o for o in own if o.name not in {f.name for f in inherited}]
        sd = StructDef(name, kind, fields, file, kw, own, base, flavour[0] if flavour else "", flavour[1] if flavour else {})
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


# ---------------------------------------------------------------------------------------------------
# Stand-ins for the custom types vLLM's MsgpackEncoder/MsgpackDecoder hooks handle


class UtilityResult:
    """vllm.v1.serial_utils.UtilityResult: a wrapper MsgpackEncoder writes as (type_info, result)."""

    def __init__(self, r: Any = None) -> None:
        self.result = r

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UtilityResult) and other.result == self.result


class TorchTensor:
    """torch.Tensor (torch is not installed here): a dtype name, a shape and the raw bytes."""

    # torch dtype names MsgpackDecoder._decode_tensor resolves with getattr(torch, dtype).
    ITEMSIZE = {
        "bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "float16": 2,
        "bfloat16": 2, "float32": 4, "float64": 8, "uint16": 2, "uint32": 4, "uint64": 8,
    }

    def __init__(self, dtype: str, shape: tuple[int, ...], data: bytes) -> None:
        numel = 1
        for d in shape:
            numel *= d
        if dtype not in self.ITEMSIZE:
            raise TypeError(f"not a torch dtype: {dtype!r}")
        if len(data) != numel * self.ITEMSIZE[dtype]:
            raise ValueError(f"{len(data)} bytes for {dtype}{list(shape)}")
        self.dtype, self.shape, self.data = dtype, tuple(shape), bytes(data)


class MultiModalKwargsItem(dict):
    """vllm.multimodal.inputs.MultiModalKwargsItem (no vector carries one; decoded as its map)."""


CUSTOM_TYPE_RAW_VIEW = 3  # vllm/v1/serial_utils.py
ZERO_COPY_THRESHOLD = 256  # envs.VLLM_MSGPACK_ZERO_COPY_THRESHOLD default


class VllmMsgpack:
    """msgspec.msgpack with the hooks of vLLM's MsgpackEncoder / MsgpackDecoder (vllm/v1/serial_utils.py)."""

    def __init__(self, size_threshold: int = ZERO_COPY_THRESHOLD) -> None:
        self.size_threshold = size_threshold
        self.encoder = msgspec.msgpack.Encoder(enc_hook=self.enc_hook)
        self.aux: list[bytes] | None = None
        self.aux_in: list[bytes] = []
        self.decoders: dict[Any, msgspec.msgpack.Decoder] = {}

    # MsgpackEncoder.encode / enc_hook / _encode_ndarray / _encode_tensor
    def encode(self, obj: Any) -> list[bytes]:
        self.aux = [b""]
        try:
            self.aux[0] = self.encoder.encode(obj)
            return [bytes(b) for b in self.aux]
        finally:
            self.aux = None

    def enc_hook(self, obj: Any) -> Any:
        if isinstance(obj, TorchTensor):
            return obj.dtype, obj.shape, self._data(obj.data, len(obj.data), True)
        if isinstance(obj, np.ndarray) and obj.dtype.kind not in ("O", "V"):
            arr_data = obj.data if obj.flags.c_contiguous else obj.tobytes()
            return obj.dtype.str, obj.shape, self._data(arr_data, obj.nbytes, bool(obj.shape))
        if isinstance(obj, slice):
            return tuple(int(v) if v is not None else None for v in (obj.start, obj.stop, obj.step))
        if isinstance(obj, UtilityResult):
            return None, obj.result  # VLLM_ALLOW_INSECURE_SERIALIZATION unset
        raise TypeError(f"Object of type {type(obj)} is not serializable")

    def _data(self, data: Any, nbytes: int, has_shape: bool) -> Any:
        assert self.aux is not None
        if not has_shape or nbytes < self.size_threshold:
            return msgspec.msgpack.Ext(CUSTOM_TYPE_RAW_VIEW, bytes(data))
        self.aux.append(bytes(data))
        return len(self.aux) - 1

    # MsgpackDecoder.decode / ext_hook / dec_hook
    def decode(self, t: Any, frames: list[bytes]) -> Any:
        if t not in self.decoders:
            args = () if t is None else (t,)
            self.decoders[t] = msgspec.msgpack.Decoder(*args, ext_hook=self.ext_hook, dec_hook=self.dec_hook)
        self.aux_in = frames
        try:
            return self.decoders[t].decode(frames[0])
        finally:
            self.aux_in = []

    @staticmethod
    def ext_hook(code: int, data: memoryview) -> Any:
        if code == CUSTOM_TYPE_RAW_VIEW:
            return data
        raise NotImplementedError(f"Extension type code {code} is not supported")

    def dec_hook(self, t: type, obj: Any) -> Any:
        if isinstance(t, type):
            if issubclass(t, np.ndarray):
                dtype, shape, data = obj
                buffer = self.aux_in[data] if isinstance(data, int) else data
                return np.frombuffer(buffer, dtype=dtype).reshape(shape)
            if issubclass(t, TorchTensor):
                dtype, shape, data = obj
                buffer = self.aux_in[data] if isinstance(data, int) else data
                return TorchTensor(dtype, tuple(shape), bytes(buffer))
            if t is slice:
                return slice(*obj)
            if issubclass(t, MultiModalKwargsItem):
                return MultiModalKwargsItem(obj)
            if t is UtilityResult:
                result_type, result = obj
                if result_type is not None:
                    raise TypeError("VLLM_ALLOW_INSECURE_SERIALIZATION must be set to use custom utility result types")
                return UtilityResult(result)
        return obj


# ---------------------------------------------------------------------------------------------------
# Real classes built from a revision's parsed structs


class _Namespace(dict):
    """Names an annotation may use; struct, enum and alias names are built on first use."""

    def __init__(self, types_: RealTypes) -> None:
        super().__init__()
        self.types = types_
        self.update(
            Any=Any,
            Literal=typing.Literal,
            Optional=typing.Optional,
            Union=typing.Union,
            Mapping=collections.abc.Mapping,
            Sequence=collections.abc.Sequence,
            np=types.SimpleNamespace(ndarray=np.ndarray),
            torch=types.SimpleNamespace(Tensor=TorchTensor),
            UtilityResult=UtilityResult,
            MultiModalKwargsItem=MultiModalKwargsItem,
        )

    def __missing__(self, name: str) -> Any:
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return self.types.get(name)


class RealTypes:
    """The revision's structs, dataclasses, NamedTuples and enums as real Python classes."""

    def __init__(self, rev: Revision) -> None:
        self.rev = rev
        self.built: dict[str, Any] = {}
        self.hints: dict[str, dict[str, Any]] = {}
        self.ns = _Namespace(self)

    def get(self, name: str) -> Any:
        if name in self.built:
            return self.built[name]
        rev = self.rev
        if name in rev.enums:
            e = rev.enums[name]
            self.built[name] = (enum.IntEnum if e.base == "IntEnum" else enum.Enum)(name, e.members)
        elif name in rev.aliases:
            self.built[name] = self.annotation(rev.aliases[name])
        elif name in rev.structs or name in rev.support:
            self.built[name] = self._build((rev.structs.get(name) or rev.support[name]))
        else:
            raise NameError(f"{rev.rev}: annotation name {name!r} is neither a parsed struct, enum nor alias")
        return self.built[name]

    def annotation(self, text: str) -> Any:
        t = eval(text, {"__builtins__": {}}, self.ns)  # noqa: S307 - annotations of vLLM's own source
        return self.annotation(t) if isinstance(t, str) else t

    def _default(self, d: Any) -> Any:
        if isinstance(d, EnumMember):
            return self.get(d.enum)[d.member]
        return d

    def _factory(self, f: Factory) -> Any:
        known = {"list": list, "dict": dict, "set": set}
        return known[f.what] if f.what in known else self.get(f.what)

    def _build(self, sd: StructDef) -> Any:
        hints = {f.name: self.annotation(f.annotation) for f in sd.fields}
        self.hints[sd.name] = hints
        if sd.kind in ("array", "sparse", "map"):
            spec = []
            for f in sd.fields:
                if not f.has_default:
                    spec.append((f.name, hints[f.name]))
                elif isinstance(f.default, Factory):
                    spec.append((f.name, hints[f.name], msgspec.field(default_factory=self._factory(f.default))))
                else:
                    spec.append((f.name, hints[f.name], self._default(f.default)))
            return msgspec.defstruct(sd.name, spec, module=f"vllm@{self.rev.version}", **sd.options)
        if sd.kind == "namedtuple":
            body = [f"class {sd.name}(NamedTuple):"]
            env: dict[str, Any] = {"NamedTuple": typing.NamedTuple}
            for i, f in enumerate(sd.fields):
                env[f"_t{i}"] = hints[f.name]
                if f.has_default:
                    if isinstance(f.default, Factory):
                        raise ValueError(f"{sd.name}.{f.name}: a NamedTuple has no default factories")
                    env[f"_d{i}"] = self._default(f.default)
                    body.append(f"    {f.name}: _t{i} = _d{i}")
                else:
                    body.append(f"    {f.name}: _t{i}")
            # dont_inherit: this module's `from __future__ import annotations` would turn them into strings.
            code = compile("\n".join(body), f"<{sd.name}@{self.rev.version}>", "exec", dont_inherit=True)
            exec(code, env)  # noqa: S102 - a class statement built from the parsed fields
            return env[sd.name]
        # dataclass (stdlib, pydantic, @config): the class body's own fields on top of the built base.
        namespace: dict[str, Any] = {"__annotations__": {}, "__module__": f"vllm@{self.rev.version}"}
        for f in sd.own:
            namespace["__annotations__"][f.name] = hints[f.name]
            if not f.has_default:
                if not f.init:
                    namespace[f.name] = dataclasses.field(init=False)
                continue
            if isinstance(f.default, Factory):
                namespace[f.name] = dataclasses.field(default_factory=self._factory(f.default), init=f.init)
            else:
                namespace[f.name] = dataclasses.field(default=self._default(f.default), init=f.init)
        bases = (self.get(sd.base),) if sd.base is not None else ()
        cls = type(sd.name, bases, namespace)
        if sd.flavour == "stdlib":
            return dataclasses.dataclass(**sd.decorator_options)(cls)
        config = pydantic.ConfigDict(arbitrary_types_allowed=True)
        if sd.flavour == "config":
            config["extra"] = "forbid"  # vllm/config/utils.py config()
        return pydantic.dataclasses.dataclass(cls, config=config, **sd.decorator_options)


class Revision:
    def __init__(self, mirror: Mirror, version: str, rev: str, label: str) -> None:
        self.version, self.rev, self.label = version, rev, label
        self.commit = mirror.commit(rev)
        self.date = mirror.date(rev)
        self.structs: dict[str, StructDef] = {}
        self.support: dict[str, StructDef] = {}
        self.enums: dict[str, EnumDef] = {}
        self.aliases: dict[str, str] = {}
        self.blobs: dict[str, str] = {}
        for file, names in ENUM_FILES.items():
            self.enums.update(parse_enums(mirror.show(rev, file) or "", names))
        for file, names in ALIAS_FILES.items():
            self.aliases.update(parse_aliases(mirror.show(rev, file) or "", names))
            self.blobs[file] = mirror.blob(rev, file)
        for target, files in ((self.structs, STRUCT_FILES), (self.support, SUPPORT_FILES)):
            for file, names in files.items():
                source = mirror.show(rev, file)
                if source is None:
                    raise SystemExit(f"{rev}: {file} not found in the mirror")
                self.blobs[file] = mirror.blob(rev, file)
                target.update(parse_structs(source, file, names, self.enums))
        core = mirror.show(rev, HANDSHAKE_FILE) or ""
        self.blobs[HANDSHAKE_FILE] = mirror.blob(rev, HANDSHAKE_FILE)
        self.handshake = parse_handshake_keys(core)
        self.blobs[COORDINATOR_FILE] = mirror.blob(rev, COORDINATOR_FILE)
        self.blobs[SERIAL_FILE] = mirror.blob(rev, SERIAL_FILE)
        self.request_counts = parse_request_counts(mirror.show(rev, COORDINATOR_FILE) or "")
        self.types = RealTypes(self)
        self.wire = VllmMsgpack()

    def struct(self, name: str) -> StructDef:
        return self.structs[name] if name in self.structs else self.support[name]

    def cls(self, name: str) -> Any:
        return self.types.get(name)


# ---------------------------------------------------------------------------------------------------
# Sample values → instances of the revision's classes


class S:
    """A struct value in a sample: the struct's name and its values by wire name."""

    def __init__(self, name: str, **values: Any) -> None:
        self.name = name
        self.values = values


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
    if isinstance(d, EnumMember):
        return rev.enums[d.enum].members[d.member]
    return d


def _members(t: Any) -> list[Any]:
    origin = typing.get_origin(t)
    if origin in (typing.Union, types.UnionType):
        return list(typing.get_args(t))
    return [t]


def real_value(rev: Revision, t: Any, v: Any) -> Any:
    """A sample value as the Python object vLLM would hold in a field annotated `t`."""
    if isinstance(v, S):
        return instantiate(rev, v)
    if v is None or isinstance(v, (UtilityResult, np.ndarray, TorchTensor, bool)):
        return v
    for m in _members(t):
        origin = typing.get_origin(m) or m
        args = typing.get_args(m)
        if isinstance(m, type) and issubclass(m, enum.Enum) and not isinstance(v, (list, dict)):
            return m(v)
        if origin in (set, frozenset) and isinstance(v, (list, tuple)):
            items = [real_value(rev, args[0] if args else Any, x) for x in v]
            as_set = origin(items)
            if list(as_set) != items:
                raise ValueError(f"sample {v!r} iterates as {list(as_set)!r} once a set: reorder the sample")
            return as_set
        if origin is list and isinstance(v, list):
            return [real_value(rev, args[0] if args else Any, x) for x in v]
        if origin is tuple and isinstance(v, (list, tuple)):
            return tuple(v)
        if origin in (dict, collections.abc.Mapping) and isinstance(v, dict):
            vt = args[1] if len(args) == 2 else Any
            return {k: real_value(rev, vt, x) for k, x in v.items()}
    return v


def instantiate(rev: Revision, v: S) -> Any:
    sd = rev.struct(v.name)
    cls = rev.cls(v.name)
    hints = rev.types.hints[v.name]
    known = set(sd.names())
    for k in v.values:
        if k not in known and not any(k in r.struct(v.name).names() for r in ALL_REVISIONS if v.name in r.structs):
            raise ValueError(f"{v.name} has no field {k} in any revision")
    # A field this revision does not declare is not part of its message.
    values = {k: real_value(rev, hints[k], x) for k, x in v.values.items() if k in known}
    if sd.kind == "dataclass":
        init = {f.name for f in sd.fields if f.init}
        obj = cls(**{k: x for k, x in values.items() if k in init})
        for k, x in values.items():
            if k not in init:
                object.__setattr__(obj, k, x)
        return obj
    return cls(**values)


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
    if isinstance(v, UtilityResult):
        return [None, view_of(rev, v.result)]
    if isinstance(v, np.ndarray):
        return array_view(v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, TorchTensor):
        return array_view(v.dtype, v.shape, v.data)
    if isinstance(v, (list, tuple, set, frozenset)):
        return [view_of(rev, x) for x in v]
    if isinstance(v, dict):
        return {str(k): view_of(rev, x) for k, x in v.items()}
    if isinstance(v, bytes):
        return {"bin": v.hex()}
    return v


# numpy dtype of each torch dtype name a vector uses (for the JSON view of the data).
TORCH_AS_NUMPY = {"int32": "<i4", "int64": "<i8", "float32": "<f4", "float64": "<f8", "uint8": "|u1", "int8": "|i1"}


def array_view(dtype: str, shape: Any, data: bytes) -> dict[str, Any]:
    """An array as {dtype, shape, data: the elements in C order}."""
    values = np.frombuffer(bytes(data), dtype=TORCH_AS_NUMPY.get(dtype, dtype))
    return {"dtype": dtype, "shape": [int(d) for d in shape], "data": values.tolist()}


def wire_view(rev: Revision, sample: Any, raw: Any, aux: list[bytes]) -> Any:
    """The same view derived from the bytes (msgspec's untyped decode), the sample only naming structs:
    it must equal view_of, i.e. msgspec wrote exactly the keys and values the vector claims."""
    if isinstance(sample, (np.ndarray, TorchTensor)):
        dtype, shape, data = raw
        buffer = aux[data] if isinstance(data, int) else data.data
        return array_view(dtype, shape, buffer)
    if isinstance(sample, S):
        sd = rev.struct(sample.name)
        if sd.kind in ("array", "namedtuple"):
            if not isinstance(raw, list) or len(raw) != len(sd.fields):
                raise ValueError(f"{sample.name}: expected an array of {len(sd.fields)}, got {raw!r}")
            pairs = list(zip(sd.fields, raw))
        else:
            by_name = {f.name: f for f in sd.fields}
            pairs = [(by_name[k], x) for k, x in raw.items()]
        return {
            f.name: wire_view(rev, sample.values.get(f.name, _default_of(rev, f)), x, aux) for f, x in pairs
        }
    if isinstance(sample, UtilityResult):
        return [raw[0], wire_view(rev, sample.result, raw[1], aux)]
    if isinstance(sample, (list, tuple, set, frozenset)) and isinstance(raw, list):
        items = list(sample)
        return [wire_view(rev, items[i] if i < len(items) else None, x, aux) for i, x in enumerate(raw)]
    if isinstance(sample, dict) and isinstance(raw, dict):
        return {str(k): wire_view(rev, sample.get(k), x, aux) for k, x in raw.items()}
    if isinstance(raw, dict):
        return {str(k): wire_view(rev, None, x, aux) for k, x in raw.items()}
    if isinstance(raw, list):
        return [wire_view(rev, None, x, aux) for x in raw]
    if isinstance(raw, bytes):
        return {"bin": raw.hex()}
    return raw


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


def encode_checked(rev: Revision, top: Any, obj: Any) -> list[bytes]:
    """msgspec-encode `obj`, then decode the frames as `top` (None = untyped) with the revision's classes
    and vLLM's decoder hooks and re-encode them: the tag's decoder must accept them and give them back."""
    frames = rev.wire.encode(obj)
    again = rev.wire.encode(rev.wire.decode(top, frames))
    if again != frames:
        raise SystemExit(f"{rev.rev}: decode/re-encode changed the bytes of {type(obj).__name__}")
    return frames


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


def sample_logprobs_outputs() -> S:
    """A request's first output with logprobs, as vLLM's V1 runner sends them: sample logprobs
    (LogprobsLists of numpy arrays: the sampled token then the top 2, small enough to travel inline as
    ext 3) and the prompt logprobs of a 33-token prompt (LogprobsTensors of torch tensors, 32 x 3:
    384-byte ids and logprobs go to aux frames 1 and 2, the 128-byte ranks stay inline)."""
    rows = 32
    prompt_ids = np.array([[(7 * i + j) % 32000 for j in range(3)] for i in range(rows)], dtype=np.int32)
    prompt_lps = np.array([[-(((i + j) % 8) * 0.125) for j in range(3)] for i in range(rows)], dtype=np.float32)
    prompt_ranks = np.array([1 + i % 5 for i in range(rows)], dtype=np.int32)
    return S(
        "EngineCoreOutputs",
        engine_index=0,
        outputs=[
            S(
                "EngineCoreOutput",
                request_id="chatcmpl-e-5",
                new_token_ids=[9707],
                new_logprobs=S(
                    "LogprobsLists",
                    logprob_token_ids=np.array([[9707, 9707, 13]], dtype=np.int32),
                    logprobs=np.array([[-0.25, -0.25, -1.5]], dtype=np.float32),
                    sampled_token_ranks=np.array([1], dtype=np.int64),
                ),
                new_prompt_logprobs_tensors=S(
                    "LogprobsTensors",
                    logprob_token_ids=TorchTensor("int32", prompt_ids.shape, prompt_ids.tobytes()),
                    logprobs=TorchTensor("float32", prompt_lps.shape, prompt_lps.tobytes()),
                    selected_token_ranks=TorchTensor("int32", prompt_ranks.shape, prompt_ranks.tobytes()),
                ),
            )
        ],
        timestamp=TIMESTAMP,
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
        utility_output=S("UtilityOutput", call_id=7, result=UtilityResult(True)),
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

HOW = (
    f"encoded by {MSGSPEC} (msgspec.msgpack.Encoder with the enc_hook conventions of vLLM's MsgpackEncoder, "
    "vllm/v1/serial_utils.py) from msgspec.Struct / dataclass / NamedTuple / Enum classes built at run time "
    "from these files at this commit (ast: field names, annotations, defaults, struct options, decorators), "
    "then decoded by msgspec.msgpack.Decoder against the same classes (vLLM's ext_hook and dec_hook) and "
    "re-encoded to the same bytes. Script: packages/protocol/scripts/gen-version-vectors.py."
)


def provenance(rev: Revision, files: list[str], how: str = HOW) -> dict[str, Any]:
    return {
        "vllm_revision": rev.rev,
        "vllm_commit": rev.commit,
        "vllm_commit_date": rev.date,
        "files": {f: rev.blobs[f] for f in files},
        "encoded_by": MSGSPEC,
        "how": how,
    }


def files_of(rev: Revision, layouts: dict[str, list[str]]) -> list[str]:
    return sorted({rev.struct(n).file for n in layouts} | {SERIAL_FILE})


def make_vector(rev: Revision, name: str, kind: str, value: S, description: str, frames_prefix=None) -> dict:
    frames = encode_checked(rev, rev.cls(value.name), instantiate(rev, value))
    decoded = view_of(rev, value)
    from_bytes = wire_view(rev, value, msgspec.msgpack.decode(frames[0]), frames)
    if from_bytes != decoded:
        raise SystemExit(f"{rev.rev} {name}: the bytes say\n {from_bytes}\n the sample says\n {decoded}")
    layouts = layouts_of(rev, value)
    frames = ([frames_prefix] if frames_prefix is not None else []) + frames
    return {
        "name": name,
        "kind": kind,
        "version": rev.version,
        "description": description,
        "frames_hex": [f.hex() for f in frames],
        "decoded": decoded,
        "layouts": layouts,
        "provenance": provenance(rev, files_of(rev, layouts)),
    }


def handshake_vector(rev: Revision, name: str, msg: dict[str, Any], description: str) -> dict:
    base = rev.handshake[msg["status"]]
    optional = rev.handshake.get("READY_OPTIONAL", []) if msg["status"] == "READY" else []
    allowed = base + optional
    if list(msg) != base + [k for k in optional if k in msg]:
        raise ValueError(f"{name}: keys {list(msg)} do not follow {allowed} at {rev.rev}")
    frames = encode_checked(rev, None, msg)
    return {
        "name": name,
        "kind": "handshake_status",
        "version": rev.version,
        "description": description,
        "frames_hex": [f.hex() for f in frames],
        "decoded": msg,
        "layouts": {"HandshakeStatus": allowed},
        "provenance": provenance(
            rev,
            [HANDSHAKE_FILE],
            f"plain dict written by EngineCoreProc.startup_handshake / _perform_handshake (keys read from "
            f"those functions with ast), encoded by {MSGSPEC} (msgspec.msgpack.encode of a dict: insertion "
            "order) and decoded back untyped, as the frontend reads it.",
        ),
    }


def coordinator_publish_vector(rev: Revision) -> dict:
    # DPCoordinatorProc.process_input_socket: msgspec.msgpack.encode((engine_req_counts_list,
    # current_wave, engines_running)); each entry has EngineState.request_counts' shape.
    template = rev.request_counts
    samples = [[2, 1, 0.25], [0, 3, 0.5]]
    counts = [[type(t)(x) for t, x in zip(template, sample)] for sample in samples]
    msg = (counts, 3, True)
    frames = encode_checked(rev, None, msg)
    return {
        "name": "coordinator.publish_counts",
        "kind": "coordinator_publish",
        "version": rev.version,
        "description": f"DP coordinator -> frontends publish (counts, wave, engines_running) for 2 engines; "
        f"each count entry has {len(template)} elements ([waiting, running"
        + (", kv_cache_usage" if len(template) > 2 else "")
        + "]).",
        "frames_hex": [f.hex() for f in frames],
        "decoded": {"counts": counts, "wave": 3, "engines_running": True},
        "layouts": {"EngineLoadCounts": ["waiting", "running", "kv_cache_usage"][: len(template)]},
        "provenance": provenance(
            rev,
            [COORDINATOR_FILE],
            "the publish tuple of DPCoordinatorProc (entry shape read with ast from EngineState.request_counts), "
            f"encoded by {MSGSPEC} (msgspec.msgpack.encode of a tuple of lists) and decoded back untyped.",
        ),
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
            "outputs.logprobs",
            "outputs",
            sample_logprobs_outputs(),
            "A first output with sample logprobs (LogprobsLists: numpy <i4 [1, 3], <f4 [1, 3], <i8 [1], inline "
            "ext 3) and prompt logprobs (LogprobsTensors: torch int32/float32 [32, 3] in aux frames 1 and 2, "
            "int32 [32] ranks inline), as MsgpackEncoder lays arrays out with its default 256-byte threshold.",
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
# Self-check against the real-msgspec vectors of the pin

# Vector name prefix → the type vLLM decodes the payload as (None: untyped, as the frontend reads dicts).
TOP = {
    "output.": "EngineCoreOutputs",
    "coordinator.wave_complete_from_engine": "EngineCoreOutputs",
    "coordinator.start_wave_from_engine": "EngineCoreOutputs",
    "coordinator.request_counts_from_engine": "EngineCoreOutputs",
    "coordinator.publish_counts": None,
    "coordinator.publish_wave_state": None,
    "request.": "EngineCoreRequest",
    "input.add_request": "EngineCoreRequest",
    "input.registration": "EngineCoreReadyResponse",
    "handshake.ready": None,
    "handshake.hello": None,
}


def msgspec_check(pin: Revision) -> dict[str, Any]:
    data = json.loads(PIN_VECTORS.read_text())
    checked, skipped = [], []
    for vec in data["vectors"]:
        name = vec["name"]
        prefix = next((p for p in TOP if name.startswith(p)), None)
        mirror_structs = name.startswith("python_compat") or "mirror" in vec.get("provenance_note", "").lower()
        if vec.get("provenance") != "msgspec-real" or prefix is None or mirror_structs:
            skipped.append(name)
            continue
        struct = TOP[prefix]
        frames = [bytes.fromhex(h) for h in vec["frames_hex"]]
        if struct == "EngineCoreRequest":
            payload = frames[frames.index(b"\x00") + 1 :]  # after the request-type frame
        elif struct in (None, "EngineCoreReadyResponse"):
            payload = frames[-1:]  # after the ROUTER-side identity
        else:
            payload = frames  # EngineCoreOutputs and its aux frames
        # A vector made with another VLLM_MSGPACK_ZERO_COPY_THRESHOLD says so (size_threshold=N).
        m = re.search(r"(?:size_threshold|VLLM_MSGPACK_ZERO_COPY_THRESHOLD)=(\d+)", vec.get("provenance_note", "") + vec.get("description", ""))
        wire = VllmMsgpack(int(m.group(1))) if m else pin.wire
        decoded = wire.decode(None if struct is None else pin.cls(struct), payload)
        again = wire.encode(decoded)
        if again != payload:
            raise SystemExit(
                f"msgspec check FAILED for {name}:\n real {[p.hex() for p in payload]}\n ours {[a.hex() for a in again]}"
            )
        checked.append(name)
    return {
        "vectors_file": "test/vectors/vectors.json",
        "how": f"each vector real msgspec 0.19 made from vLLM's own structs at the pin, decoded by {MSGSPEC} "
        "against the classes this script builds from the pin's source and re-encoded: byte for byte identical",
        "identical": checked,
        "not_applicable": skipped,
    }


def check_samples_against_pin(pin: Revision) -> list[str]:
    data = {v["name"]: v for v in json.loads(PIN_VECTORS.read_text())["vectors"]}
    pairs = [
        ("request.chat_typical_python", sample_request(), 2),
        ("input.registration_typical", sample_registration("main"), 1),
    ]
    for name, sample, idx in pairs:
        ours = pin.wire.encode(instantiate(pin, sample))
        real = bytes.fromhex(data[name]["frames_hex"][idx])
        if [real] != ours:
            raise SystemExit(f"sample check FAILED for {name}:\n real {real.hex()}\n ours {ours[0].hex()}")
    return [p[0] for p in pairs]


def compare_with_previous(path: Path, vectors: list[dict]) -> list[str]:
    """What changed against the file this run replaces (its bytes and decoded views)."""
    if not path.exists():
        return ["(new file)"]
    before = {v["name"]: v for v in json.loads(path.read_text())["vectors"]}
    notes = []
    for v in vectors:
        old = before.pop(v["name"], None)
        if old is None:
            notes.append(f"{v['name']}: new")
        elif old["frames_hex"] != v["frames_hex"]:
            notes.append(f"{v['name']}: BYTES DIFFER")
        elif old["decoded"] != v["decoded"]:
            notes.append(f"{v['name']}: decoded view differs")
    notes += [f"{n}: gone" for n in before]
    return notes


def unknown_field_facts(rev: Revision) -> dict[str, str]:
    """What this revision's engine does with request fields it does not declare, by decoding the
    ADD sample plus such a field with the revision's own EngineCoreRequest (real msgspec)."""
    cls = rev.cls("EngineCoreRequest")
    raw = msgspec.to_builtins(instantiate(rev, sample_request()), enc_hook=rev.wire.enc_hook)
    unknown = "stream_interval" if "stream_interval" not in rev.struct("SamplingParams").names() else "not_a_field"
    cases = {
        "EngineCoreRequest + 1 trailing element": raw + ["session-42"],
        f"SamplingParams + key {unknown!r}": [*raw[:3], {**raw[3], unknown: 0}, *raw[4:]],
    }
    facts = {}
    for what, value in cases.items():
        try:
            req = rev.wire.decode(cls, [msgspec.msgpack.encode(value)])
            facts[what] = f"decoded (the extra is ignored): request_id {req.request_id!r}"
        except msgspec.ValidationError as e:
            facts[what] = f"rejected: {e}"
    return facts


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
    generator = (
        f"packages/protocol/scripts/gen-version-vectors.py ({MSGSPEC}, pydantic {pydantic.VERSION}, "
        f"numpy {np.__version__}, Python {sys.version.split()[0]})"
    )
    for rev in ALL_REVISIONS:
        doc = {
            "about": {
                "version": rev.version,
                "label": rev.label,
                "vllm_revision": rev.rev,
                "vllm_commit": rev.commit,
                "vllm_commit_date": rev.date,
                "generator": generator,
                "real_msgspec": True,
                "encoded_by": MSGSPEC,
                "struct_fields": {n: sd.names() for n, sd in sorted(rev.structs.items())},
                "struct_fields_note": "every struct's fields in declaration order at this revision, parsed with ast "
                "(the same parse the encoding classes were built from)",
                "engine_methods": sorted(m for m in CORE_METHODS[rev.rev] if not m.startswith("_")),
                "engine_methods_note": "public methods of EngineCore, EngineCoreProc and DPEngineCoreProc in "
                "vllm/v1/engine/core.py at this revision (what a utility call can reach by getattr)",
                "msgspec_check": check,
                "unknown_request_fields": unknown_field_facts(rev),
                "unknown_request_fields_note": f"{MSGSPEC} decoding this revision's EngineCoreRequest (array_like; "
                "SamplingParams a map struct) with a field the revision does not declare: whether its engine "
                "accepts a request from a newer frontend",
                "format": "Each vector: name, kind (outputs | scheduler_stats | registration | request | "
                "handshake_status | coordinator_publish), version, frames_hex (what the decoder is given: the "
                "payload, then any aux frames; requests are [request type 0x00, payload]), decoded (wire names; "
                "structs as {field: value} with exactly the fields this revision declares), layouts (the declared "
                "field order of every struct in the message at this revision), provenance.",
            },
            "vectors": vectors_for(rev),
        }
        name = rev.rev if rev.rev.startswith("v") else f"{rev.version}-{rev.commit[:9]}"
        path = OUT_DIR / f"{name}.json"
        notes = compare_with_previous(path, doc["vectors"])
        path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        same = "every vector's bytes and view as before" if not notes else "; ".join(notes)
        print(f"wrote {path.relative_to(PACKAGE)} ({len(doc['vectors'])} vectors): {same}")
    print(f"msgspec check: {len(check['identical'])} real-msgspec pin vectors decoded and re-encoded byte for byte")


if __name__ == "__main__":
    main()
