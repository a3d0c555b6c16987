"""What a check saw of the learner's objects, as plain data, and how the judge reads it.

``snapshot`` runs next to learner code (in the notebook kernel for self-study, in
the sandboxed observer when grading) and turns a value into plain data: copies of
tensors moved to the CPU, numbers, strings, lists and dicts of those. Plain data is
exactly what ``wire.py`` carries, so nothing that crosses to the grader can carry code.
``Seen`` is the judge's read-only view of a snapshot.

Only exact ``torch.Tensor`` and ``nn.Parameter`` objects count as tensors: a subclass
or a look-alike is recorded by its type name and nothing else.
"""

from __future__ import annotations

from typing import Any

import torch

from autograder.common import trusted
from autograder.common.i18n import Text

_OF_TYPE = Text("{value} ({kind})", "{value}（{kind} 类型）")
_SEQUENCE = Text("a {kind} of {n} items", "包含 {n} 个元素的 {kind}")


def described_float(value: float) -> Text:
    """A Python float as feedback shows one: 6 significant digits, its type named."""
    return _OF_TYPE.format(value=f"{value:.6g}", kind="float")


MAX_ITEMS = 256  # items of a list, tuple or dict kept in a snapshot
_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)
_SCALARS = {bool: "bool", int: "int", float: "float", str: "str"}


def _type_name(value: Any) -> str:
    return str(trusted.type_(value).__name__)


def snapshot_tensor(t: torch.Tensor) -> dict:
    """A CPU copy of an exact tensor with the autograd facts a check may need."""
    node = t.grad_fn
    with trusted.no_grad(), trusted.inference_mode(False):
        value = t.detach().to("cpu", copy=True)
        if value.is_inference():
            value = value.clone()
    return {
        "kind": "tensor",
        "type": _type_name(t),
        "value": value,
        "requires_grad": bool(t.requires_grad),
        "is_leaf": bool(t.is_leaf),
        "grad_fn": None if node is None else str(trusted.type_(node).__name__),
        "dtype": str(t.dtype),
        "device": str(t.device),
        "shape": [int(n) for n in t.shape],
        "is_inference": bool(t.is_inference()),
        "ptr": int(t.data_ptr()),
        "storage": int(t.untyped_storage().data_ptr()),
    }


def snapshot(value: Any, depth: int = 0) -> dict:
    """Plain data describing ``value``; never raises for an odd learner object."""
    kind = trusted.type_(value)
    if value is None:
        return {"kind": "none"}
    if kind in _TENSOR_TYPES:
        return snapshot_tensor(value)
    if kind in _SCALARS:
        return {"kind": _SCALARS[kind], "value": value}
    if kind in (list, tuple) and depth < 4:
        items = [snapshot(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
        return {"kind": kind.__name__, "items": items, "length": trusted.len_(value)}
    if kind is dict and depth < 4:
        items = {
            k: snapshot(v, depth + 1)
            for k, v in list(value.items())[:MAX_ITEMS]
            if trusted.type_(k) is str
        }
        return {"kind": "dict", "items": items}
    if trusted.isinstance_(value, trusted.module_type):
        return {"kind": "module", "type": _type_name(value), "training": bool(value.training)}
    if trusted.isinstance_(value, torch.device):
        return {"kind": "device", "value": str(value)}
    if trusted.isinstance_(value, torch.dtype):
        return {"kind": "dtype", "value": str(value)}
    return {"kind": "other", "type": _type_name(value)}


class InconsistentObservation(ValueError):
    """An observation whose recorded facts disagree with its own values: it earns nothing.

    Learner code that reaches ``snapshot`` could record a tensor's right shape beside
    an empty value (``isclose(...).all()`` over an empty broadcast is True); the judge
    therefore trusts no recorded fact it can check against the value itself.
    """


# the keys of each kind of snapshot, exactly as ``snapshot`` writes them
SNAPSHOT_KEYS = {
    "none": {"kind"},
    "bool": {"kind", "value"},
    "int": {"kind", "value"},
    "float": {"kind", "value"},
    "str": {"kind", "value"},
    "list": {"kind", "items", "length"},
    "tuple": {"kind", "items", "length"},
    "dict": {"kind", "items"},
    "module": {"kind", "type", "training"},
    "device": {"kind", "value"},
    "dtype": {"kind", "value"},
    "other": {"kind", "type"},
    "tensor": {
        "kind",
        "type",
        "value",
        "requires_grad",
        "is_leaf",
        "grad_fn",
        "dtype",
        "device",
        "shape",
        "is_inference",
        "ptr",
        "storage",
    },
}
_SCALAR_KINDS = {"bool": (bool,), "int": (int,), "float": (float,), "str": (str,)}
_MAX_DEPTH = 8  # snapshots nest at most 4 deep; observations wrap them a few levels more


def _refuse(reason: str) -> None:
    raise InconsistentObservation(f"observation not consistent: {reason}")


def _is(value: Any, *types: type) -> bool:
    """Exact type (a bool is not an int here)."""
    return type(value) in types


def _dtype(name: Any) -> torch.dtype | None:
    found = getattr(torch, name.removeprefix("torch."), None) if _is(name, str) else None
    return found if isinstance(found, torch.dtype) else None


def _device(name: Any) -> torch.device | None:
    try:
        return torch.device(name) if _is(name, str) else None
    except (RuntimeError, ValueError):
        return None


def check_tensor_value(value: Any) -> None:
    """A tensor that crossed from the observer: a plain dense CPU tensor without history."""
    if not _is(value, torch.Tensor):
        _refuse(f"a tensor value of type {type(value).__name__}")
    if value.layout != torch.strided or value.device.type != "cpu" or value.requires_grad:
        _refuse(f"a tensor value that is not a plain CPU copy ({value.layout}, {value.device})")


def _check_tensor(data: dict) -> None:
    value = data["value"]
    check_tensor_value(value)
    shape = data["shape"]
    if not _is(shape, list) or not all(_is(n, int) and n >= 0 for n in shape):
        _refuse(f"tensor shape {shape!r}")
    if shape != list(value.shape):
        _refuse(f"recorded shape {shape} but the value has shape {list(value.shape)}")
    if _dtype(data["dtype"]) is None or data["dtype"] != str(value.dtype):
        _refuse(f"recorded dtype {data['dtype']!r} but the value is {value.dtype}")
    if _device(data["device"]) is None:
        _refuse(f"device {data['device']!r}")
    flags = ("requires_grad", "is_leaf", "is_inference")
    if not all(_is(data[name], bool) for name in flags):
        _refuse("autograd facts that are not True/False")
    node = data["grad_fn"]
    if node is not None and not _is(node, str):
        _refuse("a grad_fn that is not a name")
    if data["is_leaf"] != (node is None) or (node is not None and not data["requires_grad"]):
        _refuse("is_leaf, grad_fn and requires_grad that no tensor can have together")
    if data["type"] not in ("Tensor", "Parameter"):
        _refuse(f"a tensor of type {data['type']!r}")
    if not (_is(data["ptr"], int) and _is(data["storage"], int)):
        _refuse("memory addresses that are not integers")


def _check_recorded_facts(data: dict) -> None:
    """A check's own record of a tensor (not a snapshot): its shape and dtype are its value's."""
    value = data["value"]
    check_tensor_value(value)
    if "shape" in data and data["shape"] != list(value.shape):
        _refuse(f"recorded shape {data['shape']} but the value has shape {list(value.shape)}")
    if "dtype" in data and data["dtype"] != str(value.dtype):
        _refuse(f"recorded dtype {data['dtype']!r} but the value is {value.dtype}")


def check_snapshot(data: Any, depth: int = 0) -> None:
    """Refuse a snapshot (and every snapshot in it) whose facts disagree with its values."""
    if depth > _MAX_DEPTH:
        _refuse("nested too deep")
    kind = data.get("kind") if _is(data, dict) else None
    if kind not in SNAPSHOT_KEYS or set(data) != SNAPSHOT_KEYS[kind]:
        _refuse(f"not a snapshot ({kind!r})")
    if kind in _SCALAR_KINDS and not _is(data["value"], *_SCALAR_KINDS[kind]):
        _refuse(f"a {kind} whose value is {type(data['value']).__name__}")
    elif kind in ("list", "tuple"):
        items, length = data["items"], data["length"]
        if not _is(items, list) or not _is(length, int) or len(items) != min(length, MAX_ITEMS):
            _refuse(f"a {kind} whose length {length!r} disagrees with its items")
        for item in items:
            check_snapshot(item, depth + 1)
    elif kind == "dict":
        items = data["items"]
        if not _is(items, dict) or len(items) > MAX_ITEMS or not all(_is(k, str) for k in items):
            _refuse("a dict that is not a bounded dict of names")
        for item in items.values():
            check_snapshot(item, depth + 1)
    elif kind == "module" and not (_is(data["type"], str) and _is(data["training"], bool)):
        _refuse("a module record")
    elif kind == "other" and not _is(data["type"], str):
        _refuse("a type name that is not a string")
    elif kind == "device" and _device(data["value"]) is None:
        _refuse(f"device {data['value']!r}")
    elif kind == "dtype" and _dtype(data["value"]) is None:
        _refuse(f"dtype {data['value']!r}")
    elif kind == "tensor":
        _check_tensor(data)


def _looks_like_snapshot(data: dict) -> bool:
    kind = data.get("kind")
    return _is(kind, str) and kind in SNAPSHOT_KEYS and SNAPSHOT_KEYS[kind] - {"kind"} <= set(data)


def check_observation(data: Any, depth: int = 0) -> None:
    """Check a whole observation once, before any judgement reads it.

    Every snapshot in it must agree with itself, and every bare tensor must be a plain
    CPU copy; anything else in it is a check's own plain data, read as such.
    """
    if depth > 2 * _MAX_DEPTH:
        _refuse("nested too deep")
    if isinstance(data, torch.Tensor):
        check_tensor_value(data)
    elif _is(data, dict):
        if _looks_like_snapshot(data):
            check_snapshot(data)
            return
        if data.get("kind") == "tensor" and "value" in data:  # a check's own record of one
            _check_recorded_facts(data)
        for item in data.values():
            check_observation(item, depth + 1)
    elif _is(data, list, tuple):
        for item in data:
            check_observation(item, depth + 1)


class Seen:
    """The judge's view of one snapshot: attributes named like a tensor's, values only.

    A snapshot whose recorded facts disagree with its values is refused when the view
    is made (:class:`InconsistentObservation`), so every attribute below can be trusted.
    """

    def __init__(self, data: Any, checked: bool = False):
        if not _is(data, dict):
            data = {"kind": "other", "type": "?"}
        if not checked:
            check_snapshot(data)
        self.data = data

    @property
    def kind(self) -> str:
        return self.data.get("kind", "other")

    @property
    def is_tensor(self) -> bool:
        return self.kind == "tensor"

    @property
    def value(self) -> Any:
        return self.data.get("value")

    @property
    def items(self) -> list[Seen]:
        items = self.data.get("items", [])
        values = items.values() if isinstance(items, dict) else items
        return [Seen(v, checked=True) for v in values]

    def item(self, key: str) -> Seen:
        return Seen(self.data.get("items", {}).get(key, {"kind": "none"}), checked=True)

    @property
    def length(self) -> int:
        return int(self.data.get("length", len(self.data.get("items", []))))

    @property
    def requires_grad(self) -> bool:
        return bool(self.data.get("requires_grad"))

    @property
    def is_leaf(self) -> bool:
        return bool(self.data.get("is_leaf"))

    @property
    def grad_fn(self) -> str | None:
        return self.data.get("grad_fn")

    @property
    def dtype(self) -> torch.dtype | None:
        return _dtype(self.data.get("dtype"))

    @property
    def device(self) -> torch.device | None:
        return _device(self.data.get("device"))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.get("shape", ()))

    @property
    def is_inference(self) -> bool:
        return bool(self.data.get("is_inference"))

    @property
    def storage(self) -> int:
        return int(self.data.get("storage", -1))

    @property
    def ptr(self) -> int:
        return int(self.data.get("ptr", -1))

    def describe(self) -> str | Text:
        """A short description for feedback, in the learner's language: what the function gave.

        Floats are rounded as tensor values are (6 significant digits): a float32 read
        with ``.item()`` would otherwise show as 0.30000001192092896.
        """
        if self.is_tensor:
            return f"tensor(shape={self.shape}, dtype={self.dtype}, device={self.device})"
        if self.kind == "bool":
            return repr(self.value)
        if self.kind == "float":
            return described_float(self.value)
        if self.kind in ("int", "str", "device", "dtype"):
            return _OF_TYPE.format(value=repr(self.value)[:100], kind=self.kind)
        if self.kind in ("list", "tuple"):
            return _SEQUENCE.format(kind=self.kind, n=self.length)
        if self.kind == "none":
            return "None"
        return str(self.data.get("type", self.kind))
