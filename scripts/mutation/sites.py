"""Places in a solution cell that an operator may change, and the edits it makes there.

Only what a learner writes is changed: the bodies of the cell's functions and classes,
never its imports. Sites are listed in a fixed order, so the i-th site of a deep copy is
the i-th site of the original, and each mutant is made on its own copy.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
Parents = dict[int, tuple[ast.AST, str, int | None]]


@dataclass(frozen=True)
class Variant:
    """One changed answer: the operator or transform that made it, what changed, the new cell."""

    operator: str
    change: str
    code: str
    line: int = 0

    @property
    def key(self) -> str:
        """How the equivalents file and the reports name this mutant: stable across lines."""
        return f"{self.operator}: {self.change}"


@dataclass(frozen=True)
class Cell:
    """What operators need to know about the exercise besides its syntax tree."""

    function: str  # the function the test cell calls
    returns_accepted: frozenset[str] = frozenset()  # "list"/"tuple" that right answers return


@dataclass
class Site:
    """A node of a tree, with the way back to its parents."""

    tree: ast.Module
    node: ast.AST
    parents: Parents

    def parent(self, node: ast.AST | None = None) -> tuple[ast.AST, str, int | None]:
        return self.parents[id(self.node if node is None else node)]

    def functions(self) -> list[ast.FunctionDef]:
        """The functions around the node, innermost first."""
        found, node = [], self.node
        while id(node) in self.parents:
            node = self.parents[id(node)][0]
            if isinstance(node, FUNCTIONS):
                found.append(node)
        return found

    def statement_list(self) -> tuple[list[ast.stmt], int] | None:
        """The list the node sits in as a statement, and its index, or None."""
        parent, field, index = self.parent()
        if index is None or not isinstance(self.node, ast.stmt):
            return None
        return getattr(parent, field), index


def parameters(function: ast.FunctionDef | ast.Lambda) -> list[str]:
    """Every parameter name of a function, in order (positional first)."""
    args = function.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg:
        names.append(args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


def positional(function: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*function.args.posonlyargs, *function.args.args)]


def parents_of(tree: ast.AST) -> Parents:
    found: Parents = {}
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for index, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        found[id(child)] = (parent, field, index)
            elif isinstance(value, ast.AST):
                found[id(value)] = (parent, field, None)
    return found


def learner_nodes(tree: ast.Module) -> list[ast.AST]:
    """Nodes inside the cell's top-level functions and classes, in a fixed order."""
    nodes: list[ast.AST] = []
    for top in tree.body:
        if isinstance(top, (*FUNCTIONS, ast.ClassDef)):
            nodes.extend(node for node in ast.walk(top) if node is not top)
    return nodes


def sites(tree: ast.Module, match: Callable[[Site], bool]) -> list[Site]:
    parents = parents_of(tree)
    candidates = (Site(tree, node, parents) for node in learner_nodes(tree))
    return [site for site in candidates if match(site)]


def top_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, FUNCTIONS) and n.name == name), None)


def snippet(node: ast.AST | list, width: int = 70) -> str:
    """One line of source for a report: the first line, shortened."""
    if isinstance(node, list):
        text = "; ".join(snippet(n, width) for n in node) if node else "nothing"
    elif isinstance(node, (*FUNCTIONS, ast.ClassDef)):
        text = f"{'class' if isinstance(node, ast.ClassDef) else 'def'} {node.name} …"
    else:
        lines = ast.unparse(ast.fix_missing_locations(node)).splitlines() or [""]
        text = lines[0] + (" …" if len(lines) > 1 else "")
    return text if len(text) <= width else text[: width - 1] + "…"


# Edits -------------------------------------------------------------------------------------

Edit = Callable[[Site], str]  # changes the site's tree in place; says what it changed


def put(site: Site, new: ast.AST) -> None:
    parent, field, index = site.parent()
    if index is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[index] = new


def splice(site: Site, statements: list[ast.stmt]) -> None:
    """Put statements where the site's statement was; an emptied body gets ``pass``."""
    parent, field, index = site.parent()
    body = getattr(parent, field)
    body[index : index + 1] = statements
    if not body and field != "orelse":
        body.append(ast.Pass())


def replace(make: Callable[[Site], ast.AST]) -> Edit:
    """An edit that puts ``make(site)`` in place of the node."""

    def edit(site: Site) -> str:
        before, new = snippet(site.node), make(site)
        put(site, new)
        return f"{before} → {snippet(new)}"

    return edit


def delete(site: Site) -> str:
    before = snippet(site.node)
    splice(site, [])
    return f"delete {before}"


def remove_item(site: Site) -> str:
    """Take a keyword, decorator or ``with`` item out of its list."""
    parent, field, index = site.parent()
    before = snippet(site.node)
    del getattr(parent, field)[index]
    return f"drop {before}"


def unwrap(site: Site) -> str:
    """Put a compound statement's body in its place."""
    before = snippet(site.node)
    splice(site, list(site.node.body))
    return f"{before} → its body alone"


# Mutants from sites ------------------------------------------------------------------------


def at_sites(
    name: str,
    tree: ast.Module,
    match: Callable[[Site], bool],
    alternatives: Callable[[Site], list[Edit]],
) -> Iterator[Variant]:
    """One mutant per site and alternative, each made on a fresh copy of the tree."""
    for index, site in enumerate(sites(tree, match)):
        for choice in range(len(alternatives(site))):
            copied = copy.deepcopy(tree)
            target = sites(copied, match)[index]
            change = alternatives(target)[choice](target)
            yield Variant(name, change, unparse(copied), getattr(site.node, "lineno", 0))


def unparse(tree: ast.Module) -> str:
    return ast.unparse(ast.fix_missing_locations(tree))


def parse_expr(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


def parse_stmts(source: str) -> list[ast.stmt]:
    return ast.parse(source).body


# Matching helpers ----------------------------------------------------------------------------


def method_call(node: ast.AST, names: set[str] | frozenset[str]) -> bool:
    """``something.name(...)`` for a name in ``names``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
    )


def call_statement(node: ast.AST, names: set[str] | frozenset[str]) -> bool:
    """A statement that only calls ``x.name(...)`` or ``name(...)``."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    func = node.value.func
    return (isinstance(func, ast.Attribute) and func.attr in names) or (
        isinstance(func, ast.Name) and func.id in names
    )


def dotted(node: ast.AST) -> str | None:
    """``torch.nn.functional.mse_loss`` for that attribute chain; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def in_nested_function(site: Site) -> ast.FunctionDef | None:
    """The innermost function when it is defined inside another one (a hook, a closure)."""
    functions = site.functions()
    return functions[0] if len(functions) >= 2 else None
