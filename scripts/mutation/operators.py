"""Mutation operators: each turns a solution cell into answers a learner could plausibly write.

A check is only as good as the wrong answers it refuses. The autograd operators embody
the curriculum's misconceptions (each names the IDs it stands for); the generic ones are
the usual slips (a statement left out, ``mean`` for ``sum``, off by one) and the state
holes of issue 33 (a result memoised per input, a global setting left changed, a
caller's list consumed, an optimizer's history thrown away). An operator that finds no
place to apply in a cell makes no mutant there.
"""

from __future__ import annotations

import ast
import copy

from . import autograd_operators, generic_operators  # noqa: F401 - they register, in this order
from .registry import GENERIC, OPERATORS, Operator
from .sites import Cell, Variant, unparse

__all__ = ["GENERIC", "OPERATORS", "Operator", "mutants"]


def mutants(tree: ast.Module, cell: Cell) -> list[Variant]:
    """Every mutant of the cell, each distinct and different from the solution.

    Operators run in the order above, so a mutant two operators make (dropping
    ``handle.remove()`` is also deleting a statement) carries the more specific name.
    """
    seen = {unparse(copy.deepcopy(tree))}
    found = []
    for operator in OPERATORS:
        for mutant in operator.make(tree, cell):
            if mutant.code not in seen and _compiles(mutant.code):
                seen.add(mutant.code)
                found.append(mutant)
    return _numbered(found)


def _compiles(code: str) -> bool:
    try:
        compile(code, "<mutant>", "exec")
    except SyntaxError:
        return False
    return True


def _numbered(found: list[Variant]) -> list[Variant]:
    """Give repeated keys (the same change at two places) a ``#n`` so each key names one."""
    counts: dict[str, int] = {}
    numbered = []
    for mutant in found:
        counts[mutant.key] = counts.get(mutant.key, 0) + 1
        if counts[mutant.key] > 1:
            mutant = Variant(
                mutant.operator, f"{mutant.change} #{counts[mutant.key]}", mutant.code, mutant.line
            )
        numbered.append(mutant)
    return numbered
