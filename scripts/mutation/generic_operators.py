"""Generic operators: the usual slips, and the state holes of issue 33.

Slips: a statement left out, ``mean`` for ``sum``, off by one, ``>`` for ``>=``, a
condition negated, in-place for out-of-place, two arguments swapped, a keyword left
out. State: a result memoised per input object, a global setting left changed, the
caller's list consumed, an optimizer's history thrown away.
"""

from __future__ import annotations

import ast
import copy
import functools
from collections.abc import Callable, Iterator

import torch

from .registry import (
    GENERIC,
    at,
    constant,
    keyword_is,
    one,
    whole,
)
from .sites import (
    Cell,
    Edit,
    Site,
    Variant,
    delete,
    dotted,
    method_call,
    parse_stmts,
    positional,
    remove_item,
    replace,
    snippet,
    top_function,
    unparse,
)

# Generic operators --------------------------------------------------------------------------


def _deletable(site: Site) -> bool:
    node = site.node
    if site.statement_list() is None or isinstance(node, ast.Pass):
        return False
    return not (isinstance(node, ast.Expr) and constant(node.value, (str,)))  # a docstring


at("delete-statement", (GENERIC,), "a step left out", _deletable, one(delete))


def _swap_method(names: dict[str, str]) -> Callable[[Site], list[Edit]]:
    def alternatives(site: Site) -> list[Edit]:
        def edit(s: Site) -> str:
            before = snippet(s.node)
            s.node.func.attr = names[s.node.func.attr]
            return f"{before} → {snippet(s.node)}"

        return [edit]

    return alternatives


_REDUCTIONS = {"mean": "sum", "sum": "mean"}


def _reduction_site(site: Site) -> bool:
    if method_call(site.node, set(_REDUCTIONS)):
        return True
    return keyword_is(site, "reduction") and constant(site.node.value, (str,))


def _swap_reduction(site: Site) -> list[Edit]:
    if isinstance(site.node, ast.keyword):
        value = site.node.value.value
        return [
            replace(lambda s: ast.keyword("reduction", ast.Constant(_REDUCTIONS.get(value, "sum"))))
        ]
    return _swap_method(_REDUCTIONS)(site)


at("mean-sum", (GENERIC,), "mean for sum and back", _reduction_site, _swap_reduction)


def _integer(site: Site) -> int | None:
    node = site.node
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -node.operand.value if constant(node.operand, (int,)) else None
    if constant(node, (int,)):
        parent = site.parent()[0]
        negated = isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub)
        return None if negated else node.value
    return None


def _shifted(delta: int) -> Edit:
    def make(site: Site) -> ast.expr:
        value = _integer(site) + delta
        return ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-value))

    return replace(make)


at(
    "off-by-one",
    (GENERIC,),
    "an integer constant or slice bound off by one",
    lambda s: _integer(s) is not None,
    lambda s: [_shifted(1), _shifted(-1)],
)

_BOUNDARIES = {ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Lt: ast.LtE, ast.LtE: ast.Lt}


def _flip_boundary(site: Site) -> str:
    before = snippet(site.node)
    site.node.ops = [_BOUNDARIES[type(site.node.ops[0])]()]
    return f"{before} → {snippet(site.node)}"


at(
    "boundary",
    (GENERIC,),
    "> for >= and < for <=",
    lambda s: (
        isinstance(s.node, ast.Compare)
        and len(s.node.ops) == 1
        and type(s.node.ops[0]) in _BOUNDARIES
    ),
    one(_flip_boundary),
)


def _negate(site: Site) -> str:
    before, test = snippet(site.node.test), site.node.test
    negated = (
        test.operand
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        else (ast.UnaryOp(ast.Not(), test))
    )
    site.node.test = negated
    return f"{before} → {snippet(negated)}"


at(
    "negate-condition",
    (GENERIC,),
    "the branch taken the wrong way",
    lambda s: isinstance(s.node, (ast.If, ast.IfExp, ast.While)),
    one(_negate),
)


def _tensor_method(name: str) -> bool:
    return callable(getattr(torch.Tensor, name, None))


# Calls whose result is a Python number whatever the tensor: ``x += t.item()`` on a number
# is ``x = x + t.item()``, so toggling it makes an equivalent mutant, never a slip.
_NUMBER_METHODS = {"item", "element_size", "nelement", "numel", "dim", "ndimension"}
_NUMBER_FUNCTIONS = {"len", "int", "float", "round", "abs"}


def _python_number(node: ast.AST) -> bool:
    """Whether ``node`` is a Python number by its form alone (a literal, ``t.item()``, …)."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.BinOp):
        return _python_number(node.left) and _python_number(node.right)
    if isinstance(node, ast.UnaryOp):
        return _python_number(node.operand)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            return func.attr in _NUMBER_METHODS
        return isinstance(func, ast.Name) and func.id in _NUMBER_FUNCTIONS
    return False


def _number_accumulator(site: Site, name: str) -> bool:
    """Whether ``name`` starts as a number literal in a function around the site."""
    for function in site.functions():  # innermost first: a nonlocal lives outside
        for node in ast.walk(function):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and target.id == name:
                return _python_number(value)
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                for item, item_value in zip(target.elts, value.elts, strict=False):
                    if isinstance(item, ast.Name) and item.id == name:
                        return _python_number(item_value)
    return False


def _in_place_toggle(site: Site) -> bool:
    node = site.node
    if isinstance(node, ast.AugAssign):
        if not isinstance(node.target, ast.Name):
            return False
        # a number stays a number either way: the toggle could not change behaviour
        return not (_number_accumulator(site, node.target.id) and _python_number(node.value))
    if isinstance(node, ast.Assign):
        value, targets = node.value, node.targets
        return (
            len(targets) == 1
            and isinstance(targets[0], ast.Name)
            and isinstance(value, ast.BinOp)
            and isinstance(value.left, ast.Name)
            and value.left.id == targets[0].id
        )
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    owner = dotted(node.func.value) or ""
    if owner in ("torch", "F", "torch.nn.functional") or owner[:1].isupper():
        return False  # a module's or a class's function, not a tensor's method
    name = node.func.attr
    if name.endswith("_") and not name.startswith("_"):
        return _tensor_method(name[:-1])
    return _tensor_method(name + "_")


def _toggle(site: Site) -> ast.AST:
    node = site.node
    if isinstance(node, ast.AugAssign):
        name = node.target.id
        return ast.Assign(
            [ast.Name(name, ast.Store())],
            ast.BinOp(ast.Name(name, ast.Load()), node.op, node.value),
        )
    if isinstance(node, ast.Assign):
        return ast.AugAssign(node.targets[0], node.value.op, node.value.right)
    name = node.func.attr
    node.func.attr = name[:-1] if name.endswith("_") else name + "_"
    return node


at(
    "in-place",
    ("DT-3", GENERIC),
    "in-place for out-of-place and back (add_ / add, x += y / x = x + y)",
    _in_place_toggle,
    one(replace(_toggle)),
)


def _swappable(site: Site) -> bool:
    node = site.node
    return (
        isinstance(node, ast.Call)
        and len(node.args) >= 2
        and not any(isinstance(a, ast.Starred) for a in node.args)
    )


def _swap(position: int) -> Edit:
    def edit(site: Site) -> str:
        before, args = snippet(site.node), site.node.args
        args[position], args[position + 1] = args[position + 1], args[position]
        return f"{before} → {snippet(site.node)}"

    return edit


at(
    "swap-args",
    (GENERIC,),
    "two arguments of a call swapped",
    _swappable,
    lambda s: [
        _swap(i)
        for i in range(len(s.node.args) - 1)
        if ast.dump(s.node.args[i]) != ast.dump(s.node.args[i + 1])
    ],
)


def _drop_operand(position: int) -> Edit:
    def make(site: Site) -> ast.expr:
        values = [v for i, v in enumerate(site.node.values) if i != position]
        return values[0] if len(values) == 1 else ast.BoolOp(site.node.op, values)

    return replace(make)


at(
    "drop-bool-operand",
    ("CS-5", GENERIC),
    "one condition of an and/or left out",
    lambda s: isinstance(s.node, ast.BoolOp),
    lambda s: [_drop_operand(i) for i in range(len(s.node.values))],
)

_BUILTINS = {"any": "all", "all": "any", "min": "max", "max": "min"}


def _swap_builtin(site: Site) -> ast.expr:
    call = site.node
    return ast.Call(ast.Name(_BUILTINS[call.func.id], ast.Load()), call.args, call.keywords)


at(
    "swap-builtin",
    (GENERIC,),
    "any for all, min for max, and back",
    lambda s: isinstance(s.node, ast.Call) and getattr(s.node.func, "id", None) in _BUILTINS,
    one(replace(_swap_builtin)),
)
at(
    "drop-keyword",
    (GENERIC,),
    "a keyword argument left out (device=, dtype=, lr=, dim=)",
    lambda s: isinstance(s.node, ast.keyword) and s.node.arg is not None,
    one(remove_item),
)

# Whole-cell operators: state kept across calls, left behind, or taken from the caller ---------

_MEMOISER = """
def _memoised(function):
    cache = {}

    def cached(*args, **kwargs):
        key = id(args[0]) if args else id(next(iter(kwargs.values()), None))
        if key not in cache:
            cache[key] = function(*args, **kwargs)
        return cache[key]

    return cached


NAME = _memoised(NAME)
"""


def _wrapped(tree: ast.Module, cell: Cell, key: str, wrapper: str, change: str):
    """The cell with its exercise function rebound to ``wrapper`` (its NAME replaced);
    ``change`` may name the function ({f}) and its first parameter ({first})."""
    function = top_function(tree, cell.function)
    if function is None or not positional(function):
        return
    copied = copy.deepcopy(tree)
    copied.body += parse_stmts(wrapper.replace("NAME", cell.function))
    said = change.format(f=cell.function, first=positional(function)[0])
    yield Variant(key, said, unparse(copied), function.lineno)


# The same mistake where the cache keeps its keys alive (a list of the calls' arguments, as
# functools.cache does): no freed object's id is ever reused, so only a second call with the
# very same objects, changed, shows it (the contract's call in one world, Spec.between_calls).
_KEEPER = """
def _kept(function):
    calls = []

    def cached(*args, **kwargs):
        for seen, result in calls:
            if len(seen) == len(args) and all(a is b for a, b in zip(seen, args)):
                return result
        result = function(*args, **kwargs)
        calls.append((args, result))
        return result

    return cached


NAME = _kept(NAME)
"""


# The same mistake keyed by what the arguments hold, in order: each tensor's id and shape, a
# list or tuple by its items (a learner's "same inputs" test). Reordering a list changes the
# key, so only a call with the caller's lists in their order, their values changed, shows it.
_ITEM_KEYED = """
def _by_items(function):
    cache = {}

    def key_of(value):
        if isinstance(value, (list, tuple)):
            return tuple(key_of(item) for item in value)
        return (id(value), tuple(getattr(value, "shape", ())))

    def cached(*args, **kwargs):
        key = key_of(args) + key_of(tuple(kwargs.values()))
        if key not in cache:
            cache[key] = function(*args, **kwargs)
        return cache[key]

    return cached


NAME = _by_items(NAME)
"""


# name -> (why, the wrapper, what the mutant's record says changed)
_MEMOISERS = {
    "memoise": (
        "a result cached per input object, reused on the next call",
        _MEMOISER,
        "{f} cached by id({first})",
    ),
    "memoise-kept": (
        "a result cached per call's arguments, kept alive, reused for the same objects",
        _KEEPER,
        "{f} cached per identity of its arguments, which it keeps",
    ),
    "memoise-items": (
        "a result cached per the ids and shapes its arguments hold, lists item by item in order",
        _ITEM_KEYED,
        "{f} cached by the ids and shapes of its arguments' items, in order",
    ),
}
for _name, (_why, _wrapper, _change) in _MEMOISERS.items():
    whole(_name, (GENERIC,), _why)(
        functools.partial(_wrapped, key=_name, wrapper=_wrapper, change=_change)
    )


def _after_body(tree: ast.Module, cell: Cell, statements: str) -> tuple[ast.Module, int] | None:
    """A copy of the tree whose exercise function runs ``statements`` however it returns."""
    copied = copy.deepcopy(tree)
    function = top_function(copied, cell.function)
    if function is None:
        return None
    function.body = [ast.Try(function.body, [], [], parse_stmts(statements))]
    return copied, function.lineno


def _before_body(tree: ast.Module, cell: Cell, statements: str) -> tuple[ast.Module, int] | None:
    copied = copy.deepcopy(tree)
    function = top_function(copied, cell.function)
    if function is None:
        return None
    function.body[0:0] = parse_stmts(statements)
    return copied, function.lineno


_LEAKS = (
    "torch.set_grad_enabled(False)",
    "torch.set_printoptions(precision=2)",
    "torch.manual_seed(0)",
    "torch.set_default_dtype(torch.float64)",
    "torch.autograd.set_detect_anomaly(True)",
    "torch.set_float32_matmul_precision('medium')",
)


@whole("global-leak", (GENERIC,), "a global setting changed and left changed")
def _global_leak(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
    for leak in _LEAKS:
        made = _after_body(tree, cell, leak)
        if made:
            yield Variant("global-leak", f"{leak} after the body", unparse(made[0]), made[1])


def _iterated(function: ast.FunctionDef) -> list[str]:
    """Positional parameters the function loops over or measures: likely the caller's lists."""
    names = positional(function)
    used = set()
    for node in ast.walk(function):
        iterable = getattr(node, "iter", None)
        if isinstance(iterable, ast.Name):
            used.add(iterable.id)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
            "len",
            "zip",
            "enumerate",
        ):
            used.update(a.id for a in node.args if isinstance(a, ast.Name))
    return [n for n in names if n in used]


@whole("consume-list", (GENERIC,), "the caller's list emptied or shortened")
def _consume_list(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
    function = top_function(tree, cell.function)
    for name in _iterated(function) if function else []:
        for how, statement in (
            ("clear", f"if isinstance({name}, list):\n    {name}.clear()"),
            ("pop", f"if isinstance({name}, list) and {name}:\n    {name}.pop()"),
        ):
            made = _after_body(tree, cell, statement)
            yield Variant(
                "consume-list", f"{name}.{how}() after the body", unparse(made[0]), made[1]
            )


@whole("clear-optimizer-state", (GENERIC,), "the optimizer's momentum/Adam history thrown away")
def _clear_optimizer_state(tree: ast.Module, cell: Cell) -> Iterator[Variant]:
    function = top_function(tree, cell.function)
    for name in [p for p in positional(function) if "opt" in p.lower()] if function else []:
        made = _before_body(tree, cell, f"{name}.state.clear()")
        yield Variant(
            "clear-optimizer-state", f"{name}.state.clear() first", unparse(made[0]), made[1]
        )
