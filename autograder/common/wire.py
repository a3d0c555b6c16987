"""The wire format of observations: plain data, tensors as raw bytes, decoded without code.

The observer (beside learner code) writes what each check saw; the judge reads it back.
``torch.load(weights_only=True)`` read it safely but slowly: its unpickler is Python, one
step per object, and a test cell's record holds some 100,000 objects (about a second to
read one). Here the structure is a pickle that may hold only Python's own plain types
(no class is ever looked up: ``find_class`` refuses every name), and every tensor in it
is a reference into a table of raw byte strings, one per tensor, checked against its
dtype and shape before a tensor is made of it. A reference is read as a placeholder and
only then replaced by its tensor, so nothing in the pickle can act on a tensor (pickle's
BUILD on a real tensor would call ``Tensor.__setstate__``, whose ``set_`` reads memory
outside the tensor). Tensors with a dtype or layout the table does not know go through
``torch.save`` and are read back with ``weights_only``, as before.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import torch

from autograder.common import trusted

MAGIC = b"OBS1"
_SIZE = 8  # bytes of each length field, little-endian

# The dtypes whose tensors travel as raw bytes, by the name the header gives.
DTYPES: dict[str, torch.dtype] = {
    str(dtype).removeprefix("torch."): dtype
    for dtype in (
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex64,
        torch.complex128,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.bool,
    )
}
_uint8 = torch.uint8
_PLAIN = frozenset((str, int, float, bool, type(None), tuple, list, dict))  # never a tensor
_LEAVES = frozenset((str, int, float, bool, type(None), bytes))  # hold no placeholder


class WireError(ValueError):
    """Bytes that are not an observation record this format wrote: read as no record."""


class _Placeholder:
    """Where a tensor goes in the decoded structure, until it is put there."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __setstate__(self, state):
        raise WireError("a tensor reference with state")


def _length(n: int) -> bytes:
    return n.to_bytes(_SIZE, "little")


def _raw_bytes(t: torch.Tensor) -> bytes:
    """A strided CPU tensor's values, in row-major order, as bytes."""
    if not t.numel():
        return b""
    flat = t.reshape(-1)  # a view where t's strides allow one, else a copy
    if flat.stride(0) != 1 or t.is_conj() or t.is_neg():
        dense = trusted.empty(t.shape, dtype=t.dtype)  # fresh strides, whatever t's were
        dense.copy_(t.resolve_conj().resolve_neg())
        flat = dense.view(-1)
    return flat.view(_uint8).numpy().tobytes()


def dumps(value: Any) -> bytes:
    """``value`` (plain Python data and tensors) as bytes."""
    header: list[tuple[str, tuple[int, ...], int] | None] = []
    raw: list[bytes] = []
    saved: list[torch.Tensor] = []

    class _Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            if trusted.type_(obj) in _PLAIN or not trusted.isinstance_(obj, trusted.tensor_type):
                return None  # most of a record: plain values, told apart by their exact type
            t = obj.detach()
            name = str(t.dtype).removeprefix("torch.")
            if name in DTYPES and t.layout is torch.strided and t.device.type == "cpu":
                data = _raw_bytes(t)
                header.append((name, tuple(int(n) for n in t.shape), len(data)))
                raw.append(data)
            else:
                header.append(None)
                saved.append(t)
            return len(header) - 1

    structure = io.BytesIO()
    _Pickler(structure, protocol=5).dump(value)
    rest = io.BytesIO()
    if saved:
        trusted.save(saved, rest)
    parts = [
        pickle.dumps(header, protocol=5),
        structure.getvalue(),
        rest.getvalue(),
        b"".join(raw),
    ]
    return MAGIC + b"".join(_length(len(p)) + p for p in parts)


class _Unpickler(pickle.Unpickler):
    """Plain Python types only; a tensor reference becomes a placeholder."""

    def __init__(self, data: bytes, tensors: int):
        super().__init__(io.BytesIO(data))
        self.tensors = tensors

    def find_class(self, module, name):
        raise WireError(f"{module}.{name} in an observation record")

    def persistent_load(self, pid):
        if trusted.type_(pid) is not int or not 0 <= pid < self.tensors:
            raise WireError("a tensor reference out of range")
        return _Placeholder(pid)


def _parts(data: bytes) -> list[memoryview]:
    if data[: len(MAGIC)] != MAGIC:
        raise WireError("not an observation record")
    view, at, parts = memoryview(data), len(MAGIC), []
    for _ in range(4):
        size = int.from_bytes(view[at : at + _SIZE], "little")
        at += _SIZE
        if at + size > len(view):
            raise WireError("a truncated observation record")
        parts.append(view[at : at + size])
        at += size
    if at != len(view):
        raise WireError("bytes after the observation record")
    return parts


def _tensor(entry: Any, raw: memoryview, at: int) -> tuple[torch.Tensor, int]:
    """The tensor one header entry describes, from the raw bytes at ``at``."""
    if trusted.type_(entry) is not tuple or len(entry) != 3:
        raise WireError("a malformed tensor entry")
    name, shape, size = entry
    if trusted.type_(name) is not str or name not in DTYPES:
        raise WireError("an unknown dtype")
    if trusted.type_(shape) is not tuple or any(
        trusted.type_(n) is not int or n < 0 for n in shape
    ):
        raise WireError("a malformed shape")
    dtype, count = DTYPES[name], 1
    for n in shape:
        count *= n
    if trusted.type_(size) is not int or size != count * dtype.itemsize or at + size > len(raw):
        raise WireError("a tensor whose size does not match its bytes")
    if count == 0:
        return trusted.empty(shape, dtype=dtype), at
    flat = trusted.frombuffer(bytearray(raw[at : at + size]), dtype=_uint8)
    if dtype is torch.bool:
        return (flat != 0).reshape(shape), at + size
    return flat.view(dtype).reshape(shape), at + size


def _tensors(header_bytes: memoryview, rest: memoryview, raw: memoryview) -> list[torch.Tensor]:
    header = _Unpickler(bytes(header_bytes), 0).load()
    if trusted.type_(header) is not list:
        raise WireError("a malformed tensor table")
    saved: list = []
    if len(rest):
        saved = trusted.load(io.BytesIO(bytes(rest)), weights_only=True, map_location="cpu")
        if trusted.type_(saved) is not list or any(
            trusted.type_(t) is not trusted.tensor_type for t in saved
        ):
            raise WireError("a malformed list of saved tensors")
    tensors, at, taken = [], 0, 0
    for entry in header:
        if entry is None:
            if taken == len(saved):
                raise WireError("fewer saved tensors than the table names")
            tensors.append(saved[taken])
            taken += 1
        else:
            tensor, at = _tensor(entry, raw, at)
            tensors.append(tensor)
    if at != len(raw) or taken != len(saved):
        raise WireError("tensor bytes the table does not account for")
    return tensors


def loads(data: bytes) -> Any:
    """The value ``dumps`` wrote; :class:`WireError` for anything else."""
    header, structure, rest, raw = _parts(data)
    tensors = _tensors(header, rest, raw)
    try:
        value = _Unpickler(bytes(structure), len(tensors)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as e:
        raise WireError(f"not plain data: {e}") from None
    return _Placed(tensors).put(value)


class _Placed:
    """The decoded structure with each placeholder replaced by its tensor.

    Containers the pickle shares are rebuilt once and shared again, so the work is linear
    in the record's size; a container that contains itself is refused.
    """

    def __init__(self, tensors: list[torch.Tensor]):
        self.tensors = tensors
        self.done: dict[int, Any] = {}
        self.open: set[int] = set()

    def put(self, value: Any) -> Any:
        kind = trusted.type_(value)
        if kind is _Placeholder:
            return self.tensors[value.index]
        if kind not in (list, tuple, dict, set, frozenset):
            return value
        key = id(value)
        if key in self.done:
            return self.done[key]
        if key in self.open:
            raise WireError("a container that contains itself")
        self.open.add(key)
        try:
            put, leaf, type_ = self.put, _LEAVES, trusted.type_  # most items are leaves
            if kind is dict:
                placed = {
                    (k if type_(k) in leaf else put(k)): (v if type_(v) in leaf else put(v))
                    for k, v in value.items()
                }
            else:
                placed = kind(v if type_(v) in leaf else put(v) for v in value)
        except RecursionError:
            raise WireError("an observation record nested too deeply") from None
        self.open.discard(key)
        self.done[key] = placed
        return placed
