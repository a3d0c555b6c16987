"""The layer watch: Dropout and BatchNorm calls counted while a learner's function runs.

Whether a function trained or evaluated a caller's model shows in which layers ran in
training mode, under which grad mode, and whether autograd recorded them, not only in
the flags it left. :class:`LayerWatch` counts those calls on any module (the caller's or
a copy of it) and gives each training Dropout call a mask drawn from the case's seed;
:class:`LayerWatchSpec` is the base of the checks that compare those counts (lessons 03
and 08).

This module runs beside learner code: everything it calls was taken at import.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch.overrides import TorchFunctionMode

from autograder.common import dropout, trusted
from autograder.common.i18n import Text
from autograder.common.model_errors import explain_model_error
from autograder.common.oracle import Spec, World

# Taken at import, before any learner code runs (see trusted.py).
BATCHNORM = torch.nn.modules.batchnorm._BatchNorm
_DROPOUT = dropout.DROPOUT
_KINDS = {"Dropout": _DROPOUT, "BatchNorm": BATCHNORM}


COUNTS = {
    "Dropout train": Text(
        "the number of Dropout calls in training mode", "以训练模式运行的 Dropout 调用次数"
    ),
    "BatchNorm train": Text(
        "the number of BatchNorm calls in training mode", "以训练模式运行的 BatchNorm 调用次数"
    ),
    "Dropout graph": Text(
        "the number of Dropout calls autograd recorded (a graph)",
        "被自动求导记录进计算图的 Dropout 调用次数",
    ),
    "BatchNorm graph": Text(
        "the number of BatchNorm calls autograd recorded (a graph)",
        "被自动求导记录进计算图的 BatchNorm 调用次数",
    ),
}
# Counted for the blame rules only (which belief explains a mode or graph difference).
_BLAME_ONLY = ("Dropout eval", "BatchNorm eval", "outer eval")
_BLAME_ONLY += ("Dropout train grad-mode", "BatchNorm train grad-mode")


class _Functional(TorchFunctionMode):
    """A functional dropout outside any Dropout module (``F.dropout(h, p, training=True)``,
    the documented equivalent of the module) counts and is masked as a module's call is."""

    def __init__(self, layers: LayerWatch):
        super().__init__()
        self.layers = layers

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)  # drawn as the module draws: the random state agrees
        if func not in dropout.FUNCTIONAL or self.layers.inside:
            return out
        call = dropout.dropout_call(func, args, kwargs)
        if call is None or trusted.type_(out) is not trusted.tensor_type:
            return out
        self.layers.counts["Dropout train"] += 1
        if trusted.is_grad_enabled():
            self.layers.counts["Dropout train grad-mode"] += 1
        out = self.layers.masks.apply(call[1], call[0])
        if out.grad_fn is not None:
            self.layers.counts["Dropout graph"] += 1
        return out


class LayerWatch(dropout.SeededDropout):
    """Count Dropout and BatchNorm calls of any module, and the outermost calls in eval mode.

    Global hooks see copies of the caller's model too (``copy.deepcopy``,
    ``torch.func.functional_call``), so a check judges what ran, not which object ran.
    A Dropout call in training mode applies the next mask drawn from ``seed``; so does a
    functional dropout called outside a Dropout module (:class:`_Functional`).
    """

    functional = _Functional

    def __init__(self, seed: int):
        super().__init__(seed)
        self.depth = 0
        self.counts = dict.fromkeys([*COUNTS, *_BLAME_ONLY], 0)

    def _before(self, module, args) -> None:
        self.depth += 1
        self.inside += trusted.isinstance_(module, _DROPOUT)

    def _after(self, module, args, output):
        self.depth -= 1
        self.inside -= trusted.isinstance_(module, _DROPOUT)
        kind = next((k for k, t in _KINDS.items() if trusted.isinstance_(module, t)), None)
        if kind is None:
            if self.depth == 0 and not module.training:
                self.counts["outer eval"] += 1
            return None
        training = bool(module.training)
        self.counts[f"{kind} {'train' if training else 'eval'}"] += 1
        if training and trusted.is_grad_enabled():
            self.counts[f"{kind} train grad-mode"] += 1
        tensor = trusted.type_(output) is trusted.tensor_type
        if kind == "Dropout" and training and tensor and args:
            output = self.masks.apply(module.p, args[0])
        if tensor and output.grad_fn is not None:
            self.counts[f"{kind} graph"] += 1
        return output


def probe_count(ctx, *names: str) -> int:
    return sum(ctx.found.get("probe", {}).get(n, 0) for n in names)


def layers_trained(ctx) -> bool:
    return probe_count(ctx, "Dropout train", "BatchNorm train") > 0


@dataclass(frozen=True)
class LayerWatchSpec(Spec):
    """What every check that watches a caller's model's layers shares: the layer watch, the
    counts compared."""

    counted: ClassVar[tuple[str, ...]] = ("Dropout train", "BatchNorm train")
    random: ClassVar[bool] = False  # Dropout trains in the reference: the device's RNG is used

    def calling(self, world: World, case: dict, fn) -> contextlib.AbstractContextManager:
        stack = contextlib.ExitStack()
        world.layers = stack.enter_context(LayerWatch(self.seed))
        if case.get("outer"):
            stack.enter_context(trusted.no_grad())
        return stack

    def probe(self, world: World, value, again) -> dict:
        return dict(world.layers.counts)

    def probe_text(self, name: str) -> Text:
        return COUNTS.get(name) or super().probe_text(name)

    def compared(self, base: str, fields: dict) -> dict:
        if base.startswith("probe:") and base[6:] not in self.counted:
            return {}
        if base == "torch" and self.random:
            return {k: v for k, v in fields.items() if k != "rng_consumed"}
        return fields

    def explain(self, message: str) -> Text | None:
        return explain_model_error(message)
