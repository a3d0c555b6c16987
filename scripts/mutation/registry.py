"""The operator registry: what an operator is, how it is registered, and shared small edits.

Operators register themselves in the order their modules are imported
(``autograd_operators`` first, then ``generic_operators``), and that order decides
which name a mutant two operators make carries: the more specific one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .sites import (
    Cell,
    Edit,
    Site,
    Variant,
    at_sites,
    snippet,
)

GENERIC = "generic"


@dataclass(frozen=True)
class Operator:
    """A named way to break an answer, the misconception IDs it stands for, and why."""

    name: str
    targets: tuple[str, ...]
    why: str
    make: Callable[[ast.Module, Cell], Iterator[Variant]]


OPERATORS: list[Operator] = []  # in registration order


def at(name: str, targets: tuple[str, ...], why: str, match, alternatives) -> None:
    """Register an operator that edits every matching site, one mutant per alternative."""

    def make(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
        return at_sites(name, tree, match, alternatives)

    OPERATORS.append(Operator(name, targets, why, make))


def whole(name: str, targets: tuple[str, ...], why: str):
    """Register an operator that rewrites the whole cell (wrappers, inserted statements)."""

    def register(make: Callable[[ast.Module, Cell], Iterator[Variant]]):
        OPERATORS.append(Operator(name, targets, why, make))
        return make

    return register


def one(edit: Edit) -> Callable[[Site], list[Edit]]:
    return lambda site: [edit]


def receiver(site: Site) -> ast.expr:
    return site.node.func.value


def constant(node: ast.AST, kinds=(bool,)) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in kinds


def keyword_is(site: Site, name: str) -> bool:
    return isinstance(site.node, ast.keyword) and site.node.arg == name


def flip(value: ast.expr) -> ast.expr:
    """``not value`` (a constant is flipped outright)."""
    if constant(value):
        return ast.Constant(not value.value)
    return ast.UnaryOp(ast.Not(), value)


def flip_keyword(site: Site) -> str:
    before = snippet(site.node)
    site.node.value = flip(site.node.value)
    return f"{before} → {snippet(site.node)}"


def flip_first_argument(site: Site) -> ast.expr:
    return ast.Call(site.node.func, [flip(site.node.args[0])], [])
