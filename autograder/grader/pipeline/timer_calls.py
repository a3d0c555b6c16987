"""Which ``timeit.Timer(...)`` calls graded code may make: timing a function, never a string.

``timeit.Timer`` compiles and runs a statement given as a string, which would run code the
policy never read; given a callable, it only calls it. So a call is accepted where what it
times (``stmt``, and ``setup`` if given) is a ``lambda`` written there, or the name of a
function the enclosing function defines with ``def`` and binds in no other way (not a
parameter, never assigned, never declared ``global`` or ``nonlocal``): a name that could
hold a string is refused, and so is ``globals=``, which would hand timeit a namespace. The
timer is used at once by one of its timing methods (``timeit``, ``repeat``, ``autorange``),
never kept: kept, it could be set up again with a string (``t.__init__("…")``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_TIMED = ("stmt", "setup")  # Timer's arguments that may be statements, in their order
_OTHER_KEYWORDS = frozenset({"timer"})
_METHODS = frozenset({"timeit", "repeat", "autorange"})  # a Timer used at once by one of these


def accepted(tree: ast.AST) -> set[int]:
    """The calls of the cell that may be ``timeit.Timer(...)`` calls (see the module's
    docstring), by ``id``; whether a call is one is the policy's to resolve."""
    timed_at_once = [
        node.func.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _METHODS
        and isinstance(node.func.value, ast.Call)
    ]
    if not timed_at_once:  # most cells: no scopes to read
        return set()
    own: dict[int, frozenset[str]] = {}
    _walk(tree, frozenset(), own)
    return {
        id(call)
        for call in timed_at_once
        if _times_a_function(call, own.get(id(call), frozenset()))
    }


def _walk(node: ast.AST, names: frozenset[str], found: dict[int, frozenset[str]]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Call):
            found[id(child)] = names
        if isinstance(child, _SCOPES):
            _walk(child, _defined_only(child), found)
        else:
            _walk(child, names, found)


def _defined_only(function: ast.AST) -> frozenset[str]:
    """Names the function's own body defines with ``def`` and that nothing in it (nested
    scopes included) binds, declares or takes as a parameter otherwise."""
    defined = {n.name for n in _own_statements(function) if isinstance(n, _SCOPES[:2])}
    other = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            other.add(node.id)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other.update(node.names)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.ClassDef):
            other.add(node.name)
    return frozenset(defined - other)


def _own_statements(function: ast.AST) -> Iterator[ast.AST]:
    """The statements of the function's own scope (not those of functions nested in it)."""
    pending = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (*_SCOPES, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))


def _times_a_function(call: ast.Call, own: frozenset[str]) -> bool:
    """Whether a ``timeit.Timer(...)`` call times only lambdas or the enclosing function's
    own ``def`` functions, with no ``globals=`` and no unpacked arguments."""
    if len(call.args) > len(_TIMED) or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    timed = list(call.args)
    for keyword in call.keywords:
        if keyword.arg in _TIMED:
            timed.append(keyword.value)
        elif keyword.arg not in _OTHER_KEYWORDS:  # globals=, number=, **options
            return False
    return all(
        isinstance(value, ast.Lambda) or (isinstance(value, ast.Name) and value.id in own)
        for value in timed
    )
