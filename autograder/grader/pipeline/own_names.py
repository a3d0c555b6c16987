"""Private names a learner's own class may use on ``self``: its own, never another object's.

The policy refuses private attributes (``model._forward_hooks``): they reach the insides of
torch's and the course's objects. A class of the learner's that keeps its state or helpers
under private names (``self._count``, a method ``self._pack``) reaches only itself, as long
as ``self`` can be nothing but an instance of that class and the name is none its base
classes use. Both are read from the notebook's learner cells, without running them:

- the class is defined once, at module level, and across every learner cell its name is only
  called (``C(...)``) or tested (``isinstance(x, C)``): never handed around, subclassed or
  dereferenced, since ``C.method(model)`` would make ``model`` the ``self``;
- the access is ``self._name`` in the method's own scope (not a nested function, lambda or
  comprehension) of a method that takes ``self`` first, plain or a property, where no
  binding anywhere in the method names ``self``;
- ``_name`` is the class's own (a method or a literal in its body, or assigned as
  ``self._name = ...`` in a method), and no base class has it as an attribute or names it
  anywhere in its Python code.
"""

from __future__ import annotations

import ast
import functools
import types
from collections.abc import Callable, Iterator

SCOPES = (  # the nodes that open a scope of their own
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_PROPERTY_PARTS = ("setter", "getter", "deleter")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


def _own_scope(method: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of a method's body outside any nested scope."""
    pending = list(method.body)
    while pending:
        node = pending.pop()
        yield node
        pending.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, SCOPES))


def _binding(n: ast.AST) -> Iterator[str]:
    """The names one node binds itself (not its children)."""
    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
        yield n.id
    elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield n.name
    elif isinstance(n, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and n.name:
        yield n.name
    elif isinstance(n, ast.MatchMapping) and n.rest:
        yield n.rest
    elif isinstance(n, ast.alias):
        yield (n.asname or n.name).split(".")[0]
    elif isinstance(n, ast.arg):
        yield n.arg
    elif isinstance(n, ast.Global | ast.Nonlocal):
        yield from n.names


def _bound_names(node: ast.AST) -> Iterator[str]:
    """Every name that anything inside ``node`` binds, in any scope."""
    for n in ast.walk(node):
        yield from _binding(n)


def _self_of(method: ast.AST) -> str | None:
    """The name a method calls its instance: its first parameter, where the method is a
    plain one or a property's and nothing in it binds that name again."""
    if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    for decorator in method.decorator_list:
        plain = isinstance(decorator, ast.Name) and decorator.id == "property"
        part = isinstance(decorator, ast.Attribute) and decorator.attr in _PROPERTY_PARTS
        if not (plain or part):
            return None  # a staticmethod, a classmethod, anything a decorator makes of it
    positional = [*method.args.posonlyargs, *method.args.args]
    if not positional:
        return None
    name = positional[0].arg
    body = ast.Module(body=method.body, type_ignores=[])
    others = [a.arg for a in (*positional[1:], *method.args.kwonlyargs)]
    others += [a.arg for a in (method.args.vararg, method.args.kwarg) if a is not None]
    if name in others or name in set(_bound_names(body)):
        return None
    return name


def _defined_privates(cls: ast.ClassDef) -> set[str]:
    """The private names the class defines: in its body, or on ``self`` in its methods."""
    names = set()
    for statement in cls.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(statement.name)
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign):
            targets = [statement.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
        me = _self_of(statement)
        if me is None:
            continue
        for node in _own_scope(statement):
            if _on_self(node, me) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return {name for name in names if _private(name)}


def _on_self(node: ast.AST, me: str) -> bool:
    return (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me
    )


def _code_names(code: types.CodeType) -> set[str]:
    """Attribute and global names a code object uses, and its strings (``getattr``'s)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
        elif isinstance(const, str):
            names.add(const)
    return names


def _codes(value: object) -> Iterator[types.CodeType]:
    """The code objects behind a class attribute: a function, a static or class method's,
    a property's accessors."""
    if isinstance(value, staticmethod | classmethod):
        value = value.__func__
    if isinstance(value, property):
        for accessor in (value.fget, value.fset, value.fdel):
            yield from _codes(accessor)
    code = getattr(value, "__code__", None)
    if isinstance(code, types.CodeType):
        yield code


@functools.cache
def _names_in_code(klass: type) -> frozenset[str]:
    """Every name the Python code of a class's own attributes uses (read once per class)."""
    return frozenset(
        name
        for value in vars(klass).values()
        for code in _codes(value)
        for name in _code_names(code)
    )


def _base_uses(base: type, name: str) -> bool:
    """Whether a base class has ``name``, or its Python code names it anywhere."""
    if hasattr(base, name):
        return True
    return any(name in _names_in_code(klass) for klass in base.__mro__ if klass is not object)


def called_or_tested(call: ast.Call) -> list[ast.expr]:
    """Where a class may stand in a call without being handed around: the thing called, and
    the classes an ``isinstance`` or ``issubclass`` tests (one, or a tuple of them)."""
    found = [call.func]
    if isinstance(call.func, ast.Name) and call.func.id in ("isinstance", "issubclass"):
        for arg in call.args[1:]:
            found += [arg, *getattr(arg, "elts", [])]
    return found


def _only_called_or_tested(
    name: str, trees: list[ast.Module], cls: ast.ClassDef, allowed: set[int]
) -> bool:
    """Whether every learner cell uses ``name`` only where ``allowed`` (the ids of nodes
    ``called_or_tested`` gives), and binds it nowhere but in ``cls``'s definition."""
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == name:
                if not isinstance(node.ctx, ast.Load) or id(node) not in allowed:
                    return False
            elif node is not cls and name in set(_binding(node)):
                return False
    return True


def own_classes(
    trees: list[ast.Module], bases_of: Callable[[ast.ClassDef], list[type] | None]
) -> dict[str, frozenset[str]]:
    """The learner's own classes whose methods may use private names on ``self``, with
    those names. ``bases_of``: a class's bases as the policy resolves them (None where one
    is not an allowed class)."""
    defined: dict[str, list[ast.ClassDef]] = {}
    for tree in trees:
        for statement in tree.body:
            if isinstance(statement, ast.ClassDef):
                defined.setdefault(statement.name, []).append(statement)
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    allowed = {id(place) for call in calls for place in called_or_tested(call)}
    found = {}
    for name, definitions in defined.items():
        if len(definitions) != 1 or definitions[0].decorator_list or definitions[0].keywords:
            continue
        cls = definitions[0]
        bases = bases_of(cls)
        if bases is None or not _only_called_or_tested(name, trees, cls, allowed):
            continue
        privates = {p for p in _defined_privates(cls) if not any(_base_uses(b, p) for b in bases)}
        if privates:
            found[name] = frozenset(privates)
    return found


def own_accesses(tree: ast.Module, own: dict[str, frozenset[str]]) -> set[int]:
    """The ``self._name`` attribute nodes of a cell that reach its own class's own names."""
    found: set[int] = set()
    for statement in tree.body:
        if not isinstance(statement, ast.ClassDef) or statement.name not in own:
            continue
        for method in statement.body:
            me = _self_of(method)
            if me is None:
                continue
            for node in _own_scope(method):
                if _on_self(node, me) and node.attr in own[statement.name]:
                    found.add(id(node))
    return found
