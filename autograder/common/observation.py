"""What a check saw of the learner's objects, as plain data, and how the judge reads it.

``snapshot`` runs next to learner code (in the notebook kernel for self-study, in
the sandboxed observer when grading) and turns a value into plain data: copies of
tensors moved to the CPU, numbers, strings, lists and dicts of those. Plain data is
exactly what ``torch.load(weights_only=True)`` accepts, so nothing that crosses to the
grader can carry code. ``Seen`` is the judge's read-only view of a snapshot.

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


def _dtype(name: str) -> torch.dtype:
    found = getattr(torch, name.removeprefix("torch."), None)
    return found if isinstance(found, torch.dtype) else torch.float32


class Seen:
    """The judge's view of one snapshot: attributes named like a tensor's, values only."""

    def __init__(self, data: dict):
        self.data = data if isinstance(data, dict) else {"kind": "other", "type": "?"}

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
        return [Seen(v) for v in (items.values() if isinstance(items, dict) else items)]

    def item(self, key: str) -> Seen:
        return Seen(self.data.get("items", {}).get(key, {"kind": "none"}))

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
    def dtype(self) -> torch.dtype:
        return _dtype(self.data.get("dtype", ""))

    @property
    def device(self) -> torch.device:
        return torch.device(self.data.get("device", "cpu"))

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
            return _OF_TYPE.format(value=f"{self.value:.6g}", kind="float")
        if self.kind in ("int", "str", "device", "dtype"):
            return _OF_TYPE.format(value=repr(self.value)[:100], kind=self.kind)
        if self.kind in ("list", "tuple"):
            return _SEQUENCE.format(kind=self.kind, n=self.length)
        if self.kind == "none":
            return "None"
        return str(self.data.get("type", self.kind))
