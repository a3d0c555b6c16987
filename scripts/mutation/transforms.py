"""Semantics-preserving transforms: the solution written another way must still pass.

Mutants measure whether a check refuses wrong answers; these measure the other side,
that it does not refuse right ones because they are written in a style the check's
instruments do not expect (an alias taken before a spy was installed, a helper, a
decorator, other names). Each transform applies only where it keeps the meaning; the
tuple/list one only where the exercise's catalogue already has a right answer that
returns the other kind.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .sites import (
    FUNCTIONS,
    Cell,
    Variant,
    dotted,
    learner_nodes,
    parameters,
    parse_expr,
    top_function,
    unparse,
)


@dataclass(frozen=True)
class Transform:
    """A named rewrite that keeps what the answer does, and why a check must accept it."""

    name: str
    why: str
    make: Callable[[ast.Module, Cell], Iterator[Variant]]


TRANSFORMS: list[Transform] = []


def _transform(name: str, why: str):
    def register(make: Callable[[ast.Module, Cell], Iterator[Variant]]):
        TRANSFORMS.append(Transform(name, why, make))
        return make

    return register


# A module-level alias of a torch function ---------------------------------------------------


def _torch_calls(tree: ast.Module) -> list[str]:
    """Dotted torch functions the cell's code calls, in order of first use."""
    names = []
    for node in learner_nodes(tree):
        name = dotted(node.func) if isinstance(node, ast.Call) else None
        if name and name.startswith("torch.") and name not in names:
            names.append(name)
    return names


def _first_definition(tree: ast.Module) -> int:
    return next(
        (i for i, node in enumerate(tree.body) if isinstance(node, (*FUNCTIONS, ast.ClassDef))),
        len(tree.body),
    )


@_transform("alias", "a torch function bound to a module-level name before the checks run")
def _alias(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
    for name in _torch_calls(tree):
        copied = copy.deepcopy(tree)
        alias = "_" + name.replace(".", "_")
        for node in learner_nodes(copied):
            if isinstance(node, ast.Call) and dotted(node.func) == name:
                node.func = ast.Name(alias, ast.Load())
        binding = ast.Assign([ast.Name(alias, ast.Store())], parse_expr(name))
        copied.body.insert(_first_definition(copied), binding)
        yield Variant("alias", f"{alias} = {name}", unparse(copied))


# The body moved into a helper ---------------------------------------------------------------


def _forwarded(arguments: ast.arguments) -> tuple[list[ast.expr], list[ast.keyword]]:
    """The call that passes a function's own parameters on, unchanged."""
    args = [ast.Name(a.arg, ast.Load()) for a in (*arguments.posonlyargs, *arguments.args)]
    if arguments.vararg:
        args.append(ast.Starred(ast.Name(arguments.vararg.arg, ast.Load()), ast.Load()))
    keywords = [ast.keyword(a.arg, ast.Name(a.arg, ast.Load())) for a in arguments.kwonlyargs]
    if arguments.kwarg:
        keywords.append(ast.keyword(None, ast.Name(arguments.kwarg.arg, ast.Load())))
    return args, keywords


@_transform("helper", "the work done by a helper the exercise function calls")
def _helper(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
    copied = copy.deepcopy(tree)
    function = top_function(copied, cell.function)
    if function is None:
        return
    helper = copy.deepcopy(function)
    helper.name, helper.decorator_list = f"_{cell.function}_work", []
    args, keywords = _forwarded(function.args)
    call = ast.Call(ast.Name(helper.name, ast.Load()), args, keywords)
    function.body = [ast.Return(call)]
    copied.body.insert(copied.body.index(function), helper)
    yield Variant("helper", f"{cell.function}'s body moved into {helper.name}", unparse(copied))


# torch.no_grad() as a decorator or a context manager -----------------------------------------

_MANAGERS = ("torch.no_grad", "torch.enable_grad", "torch.inference_mode")


def _manager(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and dotted(node.func) in _MANAGERS


def _only_with(function: ast.FunctionDef) -> ast.With | None:
    """The function's single statement when it is ``with <grad mode>():`` and binds nothing."""
    body = function.body
    if len(body) != 1 or not isinstance(body[0], ast.With):
        return None
    items = body[0].items
    if len(items) == 1 and _manager(items[0].context_expr) and items[0].optional_vars is None:
        return body[0]
    return None


@_transform("decorator-context", "@torch.no_grad() and `with torch.no_grad():` are the same")
def _decorator_context(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
    copied = copy.deepcopy(tree)
    function = top_function(copied, cell.function)
    if function is None:
        return
    block = _only_with(function)
    decorators = [d for d in function.decorator_list if _manager(d)]
    if block is not None:
        function.decorator_list.append(block.items[0].context_expr)
        function.body = block.body
        change = "with-block → decorator"
    elif len(decorators) == 1:
        function.decorator_list.remove(decorators[0])
        function.body = [ast.With([ast.withitem(decorators[0])], function.body)]
        change = "decorator → with-block"
    else:
        return
    yield Variant("decorator-context", change, unparse(copied))


# Other names for the local variables ---------------------------------------------------------


def _bound_names(function: ast.FunctionDef) -> set[str]:
    """Names the function (and what it nests) binds, other than parameters and globals."""
    bound, kept = set(), set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, FUNCTIONS) and node is not function:
            bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global):
            kept.update(node.names)
        if isinstance(node, (*FUNCTIONS, ast.Lambda)):
            kept.update(parameters(node))
    return bound - kept


def _rename(function: ast.FunctionDef, names: dict[str, str]) -> None:
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in names:
            node.id = names[node.id]
        elif isinstance(node, FUNCTIONS) and node is not function and node.name in names:
            node.name = names[node.name]
        elif isinstance(node, ast.ExceptHandler) and node.name in names:
            node.name = names[node.name]
        elif isinstance(node, ast.Nonlocal):
            node.names = [names.get(n, n) for n in node.names]


def _functions_to_rename(tree: ast.Module) -> list[ast.FunctionDef]:
    """Top-level functions and the methods of top-level classes."""
    found = []
    for node in tree.body:
        if isinstance(node, FUNCTIONS):
            found.append(node)
        elif isinstance(node, ast.ClassDef):
            found += [n for n in node.body if isinstance(n, FUNCTIONS)]
    return found


@_transform("rename-locals", "local variables under other names")
def _rename_locals(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
    copied = copy.deepcopy(tree)
    taken = {n.id for n in ast.walk(copied) if isinstance(n, ast.Name)}
    renamed = []
    for function in _functions_to_rename(copied):
        names = {
            name: f"{name}_renamed"
            for name in sorted(_bound_names(function))
            if f"{name}_renamed" not in taken
        }
        _rename(function, names)
        renamed += names
    if renamed:
        change = ", ".join(sorted(set(renamed))) + " renamed"
        yield Variant("rename-locals", change, unparse(copied))


# A returned tuple as a list, or a list as a tuple, where a right answer already does so -------


def direct_returns(function: ast.FunctionDef) -> list[ast.Return]:
    """The function's own returns, not those of the functions it nests."""
    found, stack = [], list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node)
        if not isinstance(node, (*FUNCTIONS, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _assigns(node: ast.AST, name: str) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else []
    return any(getattr(t, "id", None) == name for t in targets)


def return_kind(function: ast.FunctionDef, node: ast.expr) -> str | None:
    """ "tuple" or "list" when the returned value is visibly one, else None."""
    if isinstance(node, ast.Tuple):
        return "tuple"
    if isinstance(node, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("list", "tuple"):
        return node.func.id
    if isinstance(node, ast.Name):
        assigned = [n.value for n in ast.walk(function) if _assigns(n, node.id)]
        kinds = {return_kind(function, value) for value in assigned}
        return kinds.pop() if len(kinds) == 1 else None
    return None


@_transform("tuple-list", "the other sequence type, where a catalogued right answer returns it")
def _tuple_list(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
    copied = copy.deepcopy(tree)
    function = top_function(copied, cell.function)
    changed = []
    for node in direct_returns(function) if function else []:
        kind = return_kind(function, node.value)
        other = {"tuple": "list", "list": "tuple"}.get(kind)
        if other and other in cell.returns_accepted:
            node.value = ast.Call(ast.Name(other, ast.Load()), [node.value], [])
            changed.append(f"{kind} → {other}")
    if changed:
        yield Variant("tuple-list", "returned " + ", ".join(changed), unparse(copied))


def transforms(tree: ast.Module, cell: Cell) -> list[Variant]:
    """Every transform that applies to the cell and changes it."""
    original = unparse(copy.deepcopy(tree))
    found = [v for t in TRANSFORMS for v in t.make(tree, cell)]
    return [v for v in found if v.code != original]
