"""Measure what autograd keeps: the tensors saved for backward.

Saved activations, not gradients, are what a recorded graph costs in memory.
Counting them through ``saved_tensors_hooks`` makes that visible on any device,
CPU included, where no allocator statistics exist.

The pack hooks store a detached alias of each saved tensor: it shares the
storage (no copy) but has no ``grad_fn``, so the hook itself creates no
reference cycle that would keep a graph alive longer than autograd would.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import Any

import torch

from autograder.common import trusted


def _nbytes(t: torch.Tensor) -> int:
    return t.element_size() * t.nelement()


def saved_bytes(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, int]:
    """Run fn and return (its result, bytes of the tensors autograd saved for backward).

    A tensor saved twice (e.g. ``x * x``) is counted twice, as autograd packs it twice.
    """
    total = 0

    def pack(saved: torch.Tensor) -> torch.Tensor:
        nonlocal total
        total += _nbytes(saved)
        return saved.detach()

    with trusted.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args, **kwargs)
    return result, total


class AliveSavedBytes:
    """While active, record every tensor saved for backward; ``alive()`` sums those still kept.

    A saved tensor stays alive as long as some graph that saved it is reachable,
    e.g. from a loss you kept. Storages of ``exclude`` (usually the model's
    parameters) are not counted: they exist anyway, graph or not. ``packed`` adds up
    every tensor saved while active, counted as :func:`saved_bytes` counts it.
    """

    def __init__(self, exclude: Iterable[torch.Tensor] = ()):
        self._excluded = {p.untyped_storage().data_ptr() for p in exclude}
        self._records: list[tuple[weakref.ref, int, int]] = []
        self.packed = 0
        self._hooks = trusted.saved_tensors_hooks(self._pack, lambda saved: saved)

    def _pack(self, saved: torch.Tensor) -> torch.Tensor:
        alias = saved.detach()
        self.packed += _nbytes(saved)
        storage = saved.untyped_storage()
        if storage.data_ptr() not in self._excluded:
            self._records.append((weakref.ref(alias), storage.data_ptr(), storage.nbytes()))
        return alias

    def alive(self) -> int:
        """Bytes of distinct storages saved for backward that some graph still holds."""
        live = {ptr: size for ref, ptr, size in self._records if ref() is not None}
        return sum(live.values())

    def __enter__(self) -> AliveSavedBytes:
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self._hooks.__exit__(*exc_info)
