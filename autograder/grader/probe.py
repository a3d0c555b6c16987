"""Runs inside the graded kernel: remember the protected functions, report any replaced.

The grader calls :func:`remember` before the first learner cell and
:func:`replaced` after each one. Verdicts never depend on this (the checks keep
their own references); it tells the instructor who tampered, and where, even
when the code hides it from a static reading (``getattr(__import__(...))``).
"""

from __future__ import annotations

import builtins
import importlib
import inspect

_TORCH = (
    "allclose equal isclose tensor as_tensor is_tensor ones zeros ones_like zeros_like rand "
    "randn randint Generator is_grad_enabled no_grad enable_grad set_grad_enabled "
    "inference_mode is_inference_mode_enabled"
).split()
_TENSOR = (
    "__eq__ __ne__ __bool__ __float__ __len__ requires_grad is_leaf grad grad_fn backward "
    "item detach clone to data_ptr is_inference element_size nelement allclose equal dtype "
    "device shape"
).split()
_BUILTINS = (
    "isinstance issubclass len repr float bool int type sum any all abs max min id callable "
    "getattr hasattr"
).split()
_AUTOGRADER = (
    "autograder.common.trusted",
    "autograder.common.compare",
    "autograder.common.result",
    "autograder.common.exercise",
    "autograder.common.inputs",
    "autograder.kernel.measure",
    "autograder.lessons.lesson01",
    "autograder.lessons.lesson02",
    "autograder.lessons.lesson03",
)
_baseline: dict[str, object] = {}


def _watched() -> dict[str, object]:
    """The objects verdicts could depend on: chosen torch names, builtins, the checks."""
    import torch
    import torch.autograd

    found = {f"torch.{n}": getattr(torch, n, None) for n in _TORCH}
    found["torch.autograd.grad"] = torch.autograd.grad
    found["torch.autograd.backward"] = torch.autograd.backward
    found |= {f"torch.Tensor.{n}": getattr(torch.Tensor, n, None) for n in _TENSOR}
    found |= {f"builtins.{n}": getattr(builtins, n, None) for n in _BUILTINS}
    for name in _AUTOGRADER:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for key, value in vars(module).items():
            if callable(value) and not key.startswith("__"):
                found[f"{name}.{key}"] = value
    return found


def remember() -> int:
    """Take the baseline (before any learner code); return how many names are watched."""
    _baseline.clear()
    _baseline.update(_watched())
    return len(_baseline)


def _same(now: object, before: object) -> bool:
    """Identity; a bound method counts as the same when its function and object are."""
    if now is before:
        return True
    if inspect.ismethod(now) and inspect.ismethod(before):
        return now.__func__ is before.__func__ and now.__self__ is before.__self__
    return False


def replaced() -> list[str]:
    """Names whose object is no longer the one remembered (replaced or deleted)."""
    now = _watched()
    return sorted(name for name, value in _baseline.items() if not _same(now.get(name), value))
