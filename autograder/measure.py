"""Measure what autograd keeps: the bytes of tensors saved for backward.

Saved activations, not gradients, are what a recorded graph costs in memory;
counting them through ``saved_tensors_hooks`` makes that visible on any device.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder import _trusted


def saved_bytes(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, int]:
    """Run fn and return (its result, bytes of the tensors autograd saved for backward).

    A tensor saved twice (e.g. ``x * x``) is counted twice, as autograd packs it twice.
    """
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()
        return saved

    with _trusted.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args, **kwargs)
    return result, total
