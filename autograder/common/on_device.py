"""The check's own run of what the task defines, on copies, on the learner's GPU.

The reference runs on the CPU. Where a GPU's backend decides an outcome by itself (which
tensors it saves for backward, how it rounds bfloat16), no state computed on the CPU can
predict it. Around the learner's call on a GPU, :class:`OnTheDevice` takes copies of the
caller's objects right before the call and runs the task's computation on them on the same
device right after it, logging each outcome as a fact (never compared by itself); a check's
``allow`` rule then reads it with :func:`there` and lets the answer agree with it. On the
CPU nothing is copied or run, and :func:`there` finds nothing.

This module runs beside learner code: what it calls is the check's own (see trusted.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.common.oracle import FACT, Context, World

_NAME = "here "  # a fact's name: this, then the base it stands for


class OnTheDevice:
    """Around one call: ``copy(world)`` before it, ``run(*copies)`` after it, as facts by base.

    ``run`` returns {base: value}, each base named as the state names what it stands for
    ("result[1]", "probe:grad|model[0].weight.grad").
    """

    def __init__(
        self, world: World, copy: Callable[[World], tuple], run: Callable[..., dict]
    ) -> None:
        self.world, self.copy, self.run = world, copy, run
        self.copies: tuple | None = None

    def __enter__(self) -> OnTheDevice:
        if self.world.device.type != "cpu":
            self.copies = self.copy(self.world)
        return self

    def __exit__(self, *exc) -> None:
        if self.copies is None:
            return
        for base, value in self.run(*self.copies).items():
            self.world.fact(f"{_NAME}{base}", value)


def there(ctx: Context) -> Any | None:
    """What the check's own run on the device gave for the base being judged, else None."""
    found = ctx.found.get(f"{FACT}{_NAME}{ctx.base}")
    return None if found is None else found["value"]
