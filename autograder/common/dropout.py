"""Dropout masks drawn from a case's seed on the CPU, whatever device a call runs on.

A check compares the learner's call on the course device with the reference's on the CPU
(the judge's references run there, and the shipped states were computed there). Dropout in
training mode draws its mask from the generator of the device it runs on, so on a GPU the
two masks differ although both answers are right. Inside :class:`SeededDropout`, every
Dropout module in training mode, and a functional dropout that trains outside one, gives
the next mask drawn from the seed on the CPU instead (kept entries scaled by 1/(1 - p), as
dropout scales them). The real dropout runs first, so the random state moves as it would.

This module runs beside learner code: everything it calls was taken at import.
"""

from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from autograder.common import trusted

# Taken at import, before any learner code runs (see trusted.py).
DROPOUT = torch.nn.modules.dropout._DropoutNd
FUNCTIONAL = (torch.nn.functional.dropout, torch.dropout)
_on_every_call_before = torch.nn.modules.module.register_module_forward_pre_hook
_on_every_call_after = torch.nn.modules.module.register_module_forward_hook
_where = torch.where


def dropout_call(func, args: tuple, kwargs: dict) -> tuple | None:
    """(input, p) of a functional dropout that trains (``F.dropout(x, p, training=True)``,
    ``torch.dropout(x, p, True)``), else None."""
    names = ("input", "p", "training" if func is FUNCTIONAL[0] else "train")
    given = dict(zip(names, args, strict=False)) | {k: v for k, v in kwargs.items() if k in names}
    x, p, train = given.get("input"), given.get("p", 0.5), given.get(names[2], True)
    if trusted.type_(x) is not trusted.tensor_type or kwargs.get("inplace") or not train:
        return None
    return x, float(p)


class Masks:
    """One call's dropout masks, drawn in turn from ``seed`` on the CPU."""

    def __init__(self, seed: int) -> None:
        self.seed, self.drawn = seed, 0

    def apply(self, p: float, x: torch.Tensor) -> torch.Tensor:
        """What dropout with keep probability 1 - p gives for ``x`` under the next mask; for
        p = 0 ``x`` itself, as PyTorch's dropout gives (an inference tensor stays one)."""
        if p == 0:
            return x
        g = trusted.generator().manual_seed(self.seed * 7919 + self.drawn)
        self.drawn += 1
        keep = (trusted.rand(x.shape, generator=g) >= p).to(x.device)
        return _where(keep, x / (1 - p), trusted.zeros((), dtype=x.dtype, device=x.device))


class _Functional(TorchFunctionMode):
    """A functional dropout outside any Dropout module (``F.dropout(h, p, training=True)``,
    the documented equivalent of the module) is masked as a module's call is."""

    def __init__(self, seeded: SeededDropout) -> None:
        super().__init__()
        self.seeded = seeded

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func not in FUNCTIONAL or self.seeded.inside:
            return out
        call = dropout_call(func, args, kwargs)
        if call is None or trusted.type_(out) is not trusted.tensor_type:
            return out
        return self.seeded.masks.apply(call[1], call[0])


class SeededDropout:
    """Around one call: each dropout that trains applies the next mask drawn from ``seed``.

    A check that also counts the calls (lesson 03) subclasses it, with hooks and a
    functional mode of its own (``_before``, ``_after``, ``functional``).
    """

    functional: type[TorchFunctionMode] = _Functional

    def __init__(self, seed: int) -> None:
        self.masks, self.inside = Masks(seed), 0
        self._handles: list = []
        self._functional: _Functional | None = None

    def _before(self, module, args) -> None:
        self.inside += trusted.isinstance_(module, DROPOUT)

    def _after(self, module, args, output):
        if not trusted.isinstance_(module, DROPOUT):
            return None
        self.inside -= 1
        if module.training and args and trusted.type_(output) is trusted.tensor_type:
            return self.masks.apply(module.p, args[0])
        return None

    def __enter__(self) -> SeededDropout:
        self._handles = [_on_every_call_before(self._before), _on_every_call_after(self._after)]
        self._functional = self.functional(self)
        self._functional.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._functional is not None:
            self._functional.__exit__(*exc)
            self._functional = None
        for handle in self._handles:
            handle.remove()
