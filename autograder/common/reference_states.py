"""The reference's states, computed once per grading process and reused.

A grading worker judges many submissions, and most of what it computes for them is the
same: every learner's visible checks draw the same cases, and a learner's hidden checks
draw the same salted cases in every notebook a lesson has. A case's state is a function
of the reference, the check (its parameters, seed included) and the case alone, so the
judge keeps what it computed, keyed by all three. It is kept as ``wire.py`` bytes and
decoded afresh for every use: no check can change another's copy, and what is compared
is exactly what a learner's kernel reads from the shipped states.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from autograder.common import wire

BUDGET_BYTES = 256 * 2**20  # about a term's worth of visible checks, and a class's hidden ones

_kept: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
_size = 0


def remembered(key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """``compute()``'s value for ``key``: computed the first time, decoded after that."""
    global _size
    blob = _kept.get(key)
    if blob is None:
        blob = wire.dumps(compute())
        _kept[key] = blob
        _size += len(blob)
        while _size > BUDGET_BYTES and len(_kept) > 1:  # the least recently used go first
            _size -= len(_kept.popitem(last=False)[1])
    else:
        _kept.move_to_end(key)
    return wire.loads(blob)
