"""Tensor checks used by every lesson's test cells.

Each check looks at one property and returns a :class:`CheckResult` that says
what it expected and what it found; the optional misconception ID is what a
failure of this property most likely means in the exercise at hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from autograder.common import trusted
from autograder.common.i18n import Text
from autograder.common.result import CheckResult
from autograder.kernel.measure import saved_bytes

YES_NO = {True: "True", False: "False"}


def _describe(obj: Any) -> str:
    if trusted.isinstance_(obj, trusted.tensor_type):
        return f"tensor(shape={tuple(obj.shape)}, dtype={obj.dtype}, device={obj.device})"
    return f"{type(obj).__name__}: {trusted.repr_(obj)[:80]}"


def is_tensor(obj: Any, name: str, misconception: str | None = None) -> CheckResult:
    """Check that obj is a torch.Tensor."""
    return CheckResult(
        Text("{name} is a tensor", "{name} 是张量").format(name=name),
        trusted.isinstance_(obj, trusted.tensor_type),
        "torch.Tensor",
        _describe(obj),
        misconception,
    )


def _flag(what: Text, found: bool, expected: bool, misconception: str | None) -> CheckResult:
    return CheckResult(what, found == expected, YES_NO[expected], YES_NO[found], misconception)


def requires_grad(
    t: torch.Tensor, expected: bool, name: str, misconception: str | None = None
) -> CheckResult:
    """Check t.requires_grad."""
    what = f"{name}.requires_grad"
    return _flag(what, bool(t.requires_grad), expected, misconception)


def is_leaf(
    t: torch.Tensor, expected: bool, name: str, misconception: str | None = None
) -> CheckResult:
    """Check t.is_leaf."""
    what = f"{name}.is_leaf"
    return _flag(what, bool(t.is_leaf), expected, misconception)


def grad_fn(
    t: torch.Tensor, expected: str | None, name: str, misconception: str | None = None
) -> CheckResult:
    """Check t.grad_fn: None, or a node whose class name starts with ``expected``."""
    node = t.grad_fn
    found = "None" if node is None else type(node).__name__
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
    found = t.device
    same_type = found.type == want.type
    same_index = want.index is None or found.index in (None, want.index)
    what = f"{name}.device"
    return CheckResult(what, same_type and same_index, str(want), str(found), misconception)


def dtype(
    t: torch.Tensor, expected: torch.dtype, name: str, misconception: str | None = None
) -> CheckResult:
    """Check the tensor's dtype."""
    what = f"{name}.dtype"
    return CheckResult(what, t.dtype == expected, str(expected), str(t.dtype), misconception)


def shape(
    t: torch.Tensor, expected: tuple[int, ...], name: str, misconception: str | None = None
) -> CheckResult:
    """Check the tensor's shape."""
    what = f"{name}.shape"
    found = tuple(t.shape)
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

    Shapes must match exactly (no broadcasting); values are compared on the CPU
    in float64 so that device and dtype differences are reported by their own checks.
    """
    what = Text("values of {name}", "{name} 的数值").format(name=name)
    if tuple(found.shape) != tuple(expected.shape):
        return CheckResult(
            what,
            False,
            f"shape {tuple(expected.shape)}",
            f"shape {tuple(found.shape)}",
            misconception,
        )
    a = found.detach().to("cpu", torch.float64)
    b = expected.detach().to("cpu", torch.float64)
    passed = bool(trusted.allclose(a, b, rtol=rtol, atol=atol))
    if passed:
        return CheckResult(what, True)
    worst = (a - b).abs().max().item()
    return CheckResult(
        what,
        False,
        f"{_summary(b)} (±{atol:g} + {rtol:g}·|x|)",
        f"{_summary(a)}, max |diff| = {worst:.3g}",
        misconception,
    )


def _summary(t: torch.Tensor) -> str:
    flat = t.flatten()
    shown = ", ".join(f"{v:.4g}" for v in flat[:4].tolist())
    more = ", …" if flat.numel() > 4 else ""
    return f"[{shown}{more}]"


def recording(expected: bool, misconception: str | None = None) -> CheckResult:
    """Check whether autograd is recording a graph right now (grad mode)."""
    found = bool(trusted.is_grad_enabled())
    what = Text(
        "autograd records a graph (torch.is_grad_enabled())",
        "自动求导正在记录计算图（torch.is_grad_enabled()）",
    )
    return _flag(what, found, expected, misconception)


def saved_for_backward(
    fn: Callable[[], Any], at_most: int, misconception: str | None = None
) -> CheckResult:
    """Run fn and check that autograd saved at most ``at_most`` bytes for backward."""
    _, found = saved_bytes(fn)
    what = Text("bytes saved for backward", "为反向传播保存的字节数")
    return CheckResult(what, found <= at_most, f"≤ {at_most}", str(found), misconception)


def returns_tuple(out: Any, length: int, shown: str) -> CheckResult:
    """Check that the learner's function returned a tuple of ``length`` items, e.g. (a, b)."""
    return CheckResult(
        Text("the return value", "返回值"),
        trusted.isinstance_(out, tuple) and trusted.len_(out) == length,
        shown,
        type(out).__name__,
    )
