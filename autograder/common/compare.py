"""Comparisons the judges use: one property each, returned as a :class:`CheckResult`.

Each comparison reads what the learner's function produced — a :class:`Seen`
snapshot (a live tensor is snapshotted first) — and says what it expected and what it
found; the optional misconception ID is what a failure of this property most
likely means in the exercise at hand. Nothing here calls learner code.
"""

from __future__ import annotations

from typing import Any

import torch

from autograder.common import trusted
from autograder.common.i18n import Text
from autograder.common.observation import Seen, snapshot
from autograder.common.result import CheckResult

YES_NO = {True: "True", False: "False"}


def seen(obj: Any) -> Seen:
    """A Seen as is; anything else (a live object, in self-study tests) snapshotted."""
    return obj if trusted.isinstance_(obj, Seen) else Seen(snapshot(obj))


def is_tensor(obj: Any, name: str, misconception: str | None = None) -> CheckResult:
    """Check that obj is exactly a torch.Tensor (or nn.Parameter), not a look-alike."""
    found = seen(obj)
    return CheckResult(
        Text("{name} is a tensor", "{name} 是张量").format(name=name),
        found.is_tensor,
        "torch.Tensor",
        found.describe(),
        misconception,
    )


def _flag(what: Text, found: bool, expected: bool, misconception: str | None) -> CheckResult:
    return CheckResult(what, found == expected, YES_NO[expected], YES_NO[found], misconception)


def requires_grad(
    t: torch.Tensor, expected: bool, name: str, misconception: str | None = None
) -> CheckResult:
    """Check t.requires_grad."""
    what = f"{name}.requires_grad"
    return _flag(what, seen(t).requires_grad, expected, misconception)


def is_leaf(
    t: torch.Tensor, expected: bool, name: str, misconception: str | None = None
) -> CheckResult:
    """Check t.is_leaf."""
    what = f"{name}.is_leaf"
    return _flag(what, seen(t).is_leaf, expected, misconception)


def grad_fn(
    t: torch.Tensor, expected: str | None, name: str, misconception: str | None = None
) -> CheckResult:
    """Check t.grad_fn: None, or a node whose class name starts with ``expected``."""
    node = seen(t).grad_fn
    found = "None" if node is None else node
    if expected is None:
        passed = node is None
    else:
        passed = node is not None and found.startswith(expected)
    what = f"{name}.grad_fn"
    return CheckResult(what, passed, expected or "None", found, misconception)


def on_device(
    t: torch.Tensor, expected: torch.device | str, name: str, misconception: str | None = None
) -> CheckResult:
    """Check the tensor's device; ``cuda`` and ``cuda:0`` name the same device."""
    want = torch.device(expected)
    found = seen(t).device  # None: not a tensor
    same_type = found is not None and found.type == want.type
    same_index = same_type and (want.index is None or found.index in (None, want.index))
    what = f"{name}.device"
    return CheckResult(what, same_index, str(want), str(found), misconception)


def dtype(
    t: torch.Tensor, expected: torch.dtype, name: str, misconception: str | None = None
) -> CheckResult:
    """Check the tensor's dtype."""
    what = f"{name}.dtype"
    found = seen(t).dtype
    return CheckResult(what, found == expected, str(expected), str(found), misconception)


def shape(
    t: torch.Tensor, expected: tuple[int, ...], name: str, misconception: str | None = None
) -> CheckResult:
    """Check the tensor's shape."""
    what = f"{name}.shape"
    found = seen(t).shape
    return CheckResult(
        what, found == tuple(expected), str(tuple(expected)), str(found), misconception
    )


def values(
    found: torch.Tensor,
    expected: torch.Tensor,
    name: str,
    misconception: str | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> CheckResult:
    """Compare values with an independent computation, within a tolerance.

    Shapes must match exactly, read off the values themselves (no broadcasting: over an
    empty broadcast every comparison holds); values are compared on the CPU in float64
    so that device and dtype differences are reported by their own checks.
    """
    what = Text("values of {name}", "{name} 的数值").format(name=name)
    found = seen(found)
    if not found.is_tensor:
        return CheckResult(what, False, "torch.Tensor", found.describe(), misconception)
    if tuple(found.value.shape) != tuple(expected.shape) or found.shape != tuple(expected.shape):
        return CheckResult(
            what,
            False,
            Text("shape {s}", "形状 {s}").format(s=tuple(expected.shape)),
            Text("shape {s}", "形状 {s}").format(s=found.shape),
            misconception,
        )
    a = found.value.to(torch.float64)
    b = expected.detach().to("cpu", torch.float64)
    close = trusted.isclose(a, b, rtol=rtol, atol=atol)
    if bool(close.all()):
        return CheckResult(what, True)
    where = tuple(int(i) for i in (~close).nonzero()[0]) if a.dim() else ()
    count = int((~close).sum())
    index = f"[{', '.join(map(str, where))}]" if where else ""
    return CheckResult(
        what,
        False,
        Text(
            "{name}{i} = {v:.6g} (tolerance ±{atol:g} + {rtol:g}·|x|)",
            "{name}{i} = {v:.6g}（容差 ±{atol:g} + {rtol:g}·|x|）",
        ).format(name=name, i=index, v=b[where].item(), atol=atol, rtol=rtol),
        Text(
            "{name}{i} = {v:.6g}; {n} of {total} entries differ",
            "{name}{i} = {v:.6g}；{total} 个元素中有 {n} 个不同",
        ).format(name=name, i=index, v=a[where].item(), n=count, total=a.numel()),
        misconception,
    )


def returns_tuple(out: Any, length: int, shown: str) -> CheckResult:
    """Check that the learner's function returned a tuple of ``length`` items, e.g. (a, b)."""
    found = seen(out)
    return CheckResult(
        Text("the return value", "返回值"),
        found.kind == "tuple" and found.length == length,
        shown,
        found.describe(),
    )
