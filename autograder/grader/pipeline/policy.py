"""What learner code in a graded notebook may use, found by reading it (docs/grading-design.md).

Graded exercises need tensors, modules and plain Python; the observer runs every
learner cell that keeps to this list, so the list is what stands between learner
code and the observations. It is an allow-list, whose tables are policy_table.py's:
imports from the listed modules, the listed builtins, names the notebook binds itself,
attributes that are neither dunder nor private nor one of the known ways out of the
interpreter. A dotted name rooted at an import is looked up here step by step without
running anything (:func:`resolve`): it reaches only listed modules and code whose home
is allowed, and a step that cannot be looked up so is refused. Code that
runs when a definition is made (default values, decorators, class bodies,
annotations) keeps to forms that cannot call anything but the listed decorators.
Modules, torch's tensor and optimizer classes and the functions the checks compare with
are used through their attributes or called, never handed around as values, so nothing
can patch them. IPython's magics are read after IPython's own translation (``%time x``
becomes a ``get_ipython()`` call, refused). A cell too long or too deeply nested to read
is refused whole, never an error of the notebook's.

Cells whose code is the instructor's own (identical to a cell of the source
notebook) are exempt: demonstrations may use what learners may not. The names
those cells bind to the course's own code are not usable from learner cells.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import importlib.util
import inspect
import operator
import re
import string
import symtable
import sys
import timeit
import types
from dataclasses import dataclass, field

from autograder.common.i18n import Text
from autograder.grader.pipeline import own_names, timer_calls
from autograder.grader.pipeline.policy_table import (
    ALLOWED_BUILTINS,
    ALLOWED_DUNDER_ATTRIBUTES,
    ALLOWED_DUNDER_DEFINITIONS,
    ALLOWED_MODULES,
    ALLOWED_PRIVATE_ATTRIBUTES,
    ALLOWED_PRIVATE_PREFIXES,
    ANY,
    BY_NAME_BUILTINS,
    CLASS_BODY_DUNDERS,
    CONTAINER_TYPE_BUILTIN,
    DECORATOR_BUILTINS,
    MAX_CELL_CHARS,
    MAX_CELL_DEPTH,
    REFUSED_ATTRIBUTE_PREFIXES,
    REFUSED_ATTRIBUTES,
    home_allowed,
    module_allowed,
)
from autograder.grader.reasons import says

# The tables (modules, homes, builtins, attributes, cell bounds) are policy_table.py's.
# What the kernel's namespace holds beyond the builtins: IPython's history and shell.
IPYTHON_NAMES = frozenset("In Out get_ipython exit quit display _ih _oh _dh _i _ii _iii".split())
IPYTHON_HISTORY = re.compile(r"_i?\d+")
# Builtins the reader trusts where they stand (isinstance's second argument may be a class):
# learner code may not rebind them.
TRUSTED_BUILTINS = frozenset({"isinstance", "issubclass", *DECORATOR_BUILTINS})

# What a violation says, in both languages (names and code in it stay as written).
NOT_LITERAL_DEFAULT = Text(
    "a default value that is not a literal or a name", "默认值既不是字面量也不是名称"
)
NOT_NAME_ANNOTATION = Text("an annotation that is not a name", "类型注解不是名称")
CLASS_BODY_STATEMENT = Text(
    "a class body statement other than a method or a literal",
    "类体中除方法和字面量以外的语句",
)
# _is_value_kind's words, in Chinese
VALUE_KINDS = {"module": "模块", "class": "类", "function": "函数"}


def _named_only(name: str) -> Text:
    return says("{name}", "名称 {name}", name=name)


def _imported_as(name: str) -> Text:
    return says("import … as {name}", "以别名 {name} 导入", name=name)


def _short(node: ast.AST) -> str:
    """A flagged expression as written, cut to 80 characters."""
    code = ast.unparse(node)
    return code if len(code) <= 80 else code[:77] + "..."


def _changes(node: ast.AST) -> Text:
    return says("changes {code}", "修改 {code}", code=ast.unparse(node))


@dataclass(frozen=True)
class Violation:
    """One construct outside the list: where it is, what it is and, where the list has
    one, what to write instead (the self-study check cell shows it; see :data:`INSTEAD`)."""

    line: int
    what: Text
    instead: Text | None = field(default=None, compare=False)

    def describe(self) -> Text:
        return says("line {line}: {what}", "第 {line} 行：{what}", line=self.line, what=self.what)


# What graded code may write instead of a refused name (a builtin, a module, an attribute).
INSTEAD = {
    "getattr": Text(
        "the attribute itself: `obj.name` (e.g. `torch.no_grad`, `model.weight`), or "
        '`getattr(obj, "name", default)` with the name written out',
        "直接写出属性：`obj.name`（例如 `torch.no_grad`、`model.weight`），或直接写出名字的 "
        '`getattr(obj, "name", default)`',
    ),
    "setattr": Text(
        'an assignment to your own object: `obj.name = value`, or `setattr(obj, "name", value)` '
        "with the name written out",
        '直接给自己的对象赋值：`obj.name = value`，或直接写出名字的 `setattr(obj, "name", value)`',
    ),
    "hasattr": Text(
        '`hasattr(obj, "name")` with the name written out, or `isinstance(obj, SomeClass)`',
        '直接写出名字的 `hasattr(obj, "name")`，或 `isinstance(obj, SomeClass)`',
    ),
    "type": Text(
        "`isinstance(x, SomeClass)`; for a tensor, `x.dtype` or `x.device`; a new container of "
        "x's kind: `type(x)(f(v) for v in x)`",
        "`isinstance(x, SomeClass)`；对张量用 `x.dtype` 或 `x.device`；要得到与 x 同类的新容器："
        "`type(x)(f(v) for v in x)`",
    ),
    "vars": Text(
        "`model.named_modules()`, `named_parameters()`, `named_buffers()`",
        "改用 `model.named_modules()`、`named_parameters()`、`named_buffers()`",
    ),
    "dir": Text(
        "`model.named_modules()`, `named_parameters()`, `named_buffers()`",
        "改用 `model.named_modules()`、`named_parameters()`、`named_buffers()`",
    ),
    "__class__": Text(
        "`isinstance(x, SomeClass)`; for a tensor, `x.dtype` or `x.device`",
        "`isinstance(x, SomeClass)`；对张量用 `x.dtype` 或 `x.device`",
    ),
    "__dict__": Text(
        "`model.named_modules()`, `named_parameters()`, `named_buffers()`",
        "改用 `model.named_modules()`、`named_parameters()`、`named_buffers()`",
    ),
    "operator": Text(
        "the operator itself (`a * b`, `x[i]`, `obj.name`) or a `lambda`",
        "直接写运算符（`a * b`、`x[i]`、`obj.name`）或 `lambda`",
    ),
    "typing": Text(
        "no annotation, or a plain name (`int`, `torch.Tensor`)",
        "不写类型注解，或只写名称（`int`、`torch.Tensor`）",
    ),
    "_forward_hooks": Text(
        "keep the handle that `register_forward_hook` returns and call `handle.remove()`",
        "保留 `register_forward_hook` 返回的句柄，再调用 `handle.remove()`",
    ),
    "_backward_hooks": Text(
        "keep the handle that `register_full_backward_hook` returns and call `handle.remove()`",
        "保留 `register_full_backward_hook` 返回的句柄，再调用 `handle.remove()`",
    ),
    "_forward_pre_hooks": Text(
        "keep the handle that `register_forward_pre_hook` returns and call `handle.remove()`",
        "保留 `register_forward_pre_hook` 返回的句柄，再调用 `handle.remove()`",
    ),
    "_modules": Text(
        "`model.named_modules()` or `model.get_submodule(name)`",
        "`model.named_modules()` 或 `model.get_submodule(name)`",
    ),
    "_parameters": Text("`model.named_parameters()`", "改用 `model.named_parameters()`"),
    "_C": Text(
        "torch's public function of the same job (`torch.set_grad_enabled(flag)` for "
        "`torch._C._set_grad_enabled(flag)`)",
        "改用做同样事情的 torch 公开函数（用 `torch.set_grad_enabled(flag)` 代替 "
        "`torch._C._set_grad_enabled(flag)`）",
    ),
    "get_ipython": Text(
        "plain Python in the cell (no magics)", "在单元格里直接写代码（不用魔法命令）"
    ),
}


# What a refused private name may be instead when INSTEAD has nothing for it: the
# notebook's own methods and attributes are named like any public one.
OWN_NAMES_PUBLIC = Text(
    "for your own methods and attributes, a name without the leading underscore "
    "(`self.pack`); for PyTorch's objects, their public methods",
    "自己定义的方法和属性，用不带前导下划线的名字（`self.pack`）；PyTorch 对象则用它们的公开方法",
)


@dataclass
class Context:
    """What the rest of the notebook says about names a cell uses.

    ``aliases``: names bound by allowed imports, to the dotted path they stand for;
    ``course``: names bound to the course's own code by the instructor's cells;
    ``bound``: names learner cells bind at module level (their own private helpers);
    ``own``: the learner's classes whose methods may use private names on ``self``, with
    those names (``own_names``).
    """

    aliases: dict[str, str] = field(default_factory=dict)
    course: set[str] = field(default_factory=set)
    bound: set[str] = field(default_factory=set)
    own: dict[str, frozenset[str]] = field(default_factory=dict)


DEFAULT_ALIASES = {
    "torch": "torch",
    "nn": "torch.nn",
    "F": "torch.nn.functional",
    "np": "numpy",
    "numpy": "numpy",
    "math": "math",
}


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not _is_dunder(name) and name != "_"


def attribute_problem(name: str) -> Text | None:
    """Why an attribute name may not be used, or None."""
    if _is_dunder(name):
        return None if name in ALLOWED_DUNDER_ATTRIBUTES else _attribute(name)
    if _is_private(name):
        if name in ALLOWED_PRIVATE_ATTRIBUTES or name.startswith(ALLOWED_PRIVATE_PREFIXES):
            return None
        return says(".{name} (private)", "私有属性 .{name}", name=name)
    if name in REFUSED_ATTRIBUTES or name.startswith(REFUSED_ATTRIBUTE_PREFIXES):
        return _attribute(name)
    return None


def _attribute(name: str) -> Text:
    return says(".{name}", "属性 .{name}", name=name)


def _module_allowed(name: str) -> bool:
    return module_allowed(name)


_MISSING = object()


@functools.lru_cache(maxsize=4096)
def _module(name: str) -> types.ModuleType | None:
    """An allowed module, imported here in the grader (never a learner-chosen one)."""
    if not _module_allowed(name):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class _Opaque:
    """What a step reads through a descriptor on an object (a property's value, a switch of
    ``torch.backends.cudnn``): where its code lives is known, its value only at run time,
    so no further step can be looked up from it."""

    def __init__(self, descriptor: object):
        self.descriptor = descriptor


_DESCRIPTORS = (
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    types.MethodWrapperType,
)
# What reading an attribute gives back as the lookup found it: on a class, functions,
# classes, modules and the descriptors that return themselves there; on other objects,
# functions and methods (bound at run time, the same code), classes and modules.
_AS_FOUND_ON_A_CLASS = (
    types.FunctionType,
    types.BuiltinFunctionType,
    property,
    type,
    types.ModuleType,
    *_DESCRIPTORS,
)
_AS_FOUND_ON_AN_OBJECT = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    type,
    types.ModuleType,
)
# Plain data: reachable, judged by what it holds.
_DATA = (
    bool,
    int,
    float,
    complex,
    str,
    bytes,
    type(None),
    type(...),
    type(NotImplemented),
    tuple,
    list,
    dict,
    set,
    frozenset,
    range,
    slice,
)
_MOST_HELD = 10_000  # objects a reachable container may hold for the reader to check them


def _static(owner: object, attr: str) -> object:
    """``owner.attr`` as Python's lookup finds it, without running ``__getattr__``,
    properties or any other code of the owner's."""
    try:
        return inspect.getattr_static(owner, attr)
    except AttributeError:
        return _MISSING


def _member(owner: object, attr: str) -> object:
    """What ``owner.attr`` is, found without running the owner's code; ``_MISSING`` when it
    cannot be found so; an :class:`_Opaque` when only run time can say."""
    value = _static(owner, attr)
    if isinstance(owner, types.ModuleType):
        if value is _MISSING and type(owner) is not types.ModuleType:
            # torch.backends' module subclasses hand what they lack to the module they wrap
            wrapped = vars(owner).get("m")
            if isinstance(wrapped, types.ModuleType) and wrapped.__name__ == owner.__name__:
                value = vars(wrapped).get(attr, _MISSING)
        if value is _MISSING:  # a submodule not imported yet
            full = f"{owner.__name__}.{attr}"
            try:
                found = importlib.util.find_spec(full) is not None
            except (ImportError, ValueError, AttributeError):
                found = False
            return (_module(full) or types.ModuleType(full)) if found else _MISSING
        if attr in vars(owner) or not hasattr(type(value), "__get__"):
            return value
        return value if isinstance(value, _AS_FOUND_ON_AN_OBJECT) else _Opaque(value)
    if value is _MISSING:
        return value
    if isinstance(value, staticmethod | classmethod):
        return value.__func__
    if isinstance(owner, type):
        if isinstance(value, _AS_FOUND_ON_A_CLASS) or not hasattr(type(value), "__get__"):
            return value
        return _Opaque(value)
    try:
        own = object.__getattribute__(owner, "__dict__")
    except AttributeError:
        own = {}
    if isinstance(own, dict) and own.get(attr, _MISSING) is value:
        return value  # the object's own attribute: never a descriptor at run time
    if isinstance(value, _AS_FOUND_ON_AN_OBJECT) or not hasattr(type(value), "__get__"):
        return value
    return _Opaque(value)


def _defined_by(value: object) -> object:
    """The object whose code ``value`` is: a descriptor's class, a property's getter, an
    opaque step's descriptor."""
    if isinstance(value, _Opaque):
        value = value.descriptor
    if isinstance(value, staticmethod | classmethod):
        value = value.__func__
    if isinstance(value, property):
        value = value.fget or value.fset or value.fdel or value
    if isinstance(value, _DESCRIPTORS):
        value = value.__objclass__
    return value


def _home(value: object) -> str:
    """The module whose code defines ``value`` (for an instance: its class's module)."""
    value = _defined_by(value)
    if isinstance(value, type) or callable(value):
        try:
            module = getattr(value, "__module__", None)
        except Exception:  # noqa: BLE001 - a library object whose lookup fails is refused
            module = None
        if isinstance(module, str):
            return module
        owner = getattr(value, "__self__", None)  # a builtin method (random.random)
        if isinstance(owner, types.ModuleType):
            return owner.__name__
        if owner is not None:
            return type(owner).__module__
    return type(value).__module__


@functools.cache
def _allowed_builtin_objects() -> tuple:
    return tuple(getattr(builtins, name) for name in ALLOWED_BUILTINS)


def _held(value: object):
    """``value`` and, for plain containers, everything they hold (keys too), depth first;
    ``_MISSING`` in place of what is too much to check."""
    pending, count = [value], 0
    while pending:
        item = pending.pop()
        count += 1
        if count > _MOST_HELD:
            yield _MISSING
            return
        yield item
        if type(item) is dict:
            pending.extend([*item.keys(), *item.values()])
        elif type(item) in (tuple, list, set, frozenset):
            pending.extend(item)


def _reach_problem(value: object, path: str) -> Text | None:
    """Why ``value``, reached as ``path``, may not be reached: a module not on the list,
    or code whose home is not one of the allowed homes (policy_table.py)."""
    for item in _held(value):
        if item is _MISSING:
            return says(
                "{path} (holds too much to check)", "{path}（内容太多，无法检查）", path=path
            )
        if isinstance(item, types.ModuleType):
            name = getattr(item, "__name__", "?")
            if _module_allowed(name) and sys.modules.get(name) is item:
                continue
            return says(
                "{path} (module {module})",
                "{path}（模块 {module}，不在允许之列）",
                path=path,
                module=name,
            )
        if type(item) in _DATA:
            continue
        home = _home(item)
        if home == "builtins":
            defined = _defined_by(item)
            if any(defined is allowed for allowed in _allowed_builtin_objects()):
                continue
        elif home_allowed(home):
            continue
        return says(
            "{path} (from `{home}`, which graded code may not reach)",
            "{path}（来自 `{home}`，评分代码不能使用）",
            path=path,
            home=home,
        )
    return None


def _unresolved(path: str) -> Text:
    return says(
        "{path} (the grader cannot look it up without running code)",
        "{path}（评分程序不运行代码就无法查到它）",
        path=path,
    )


@functools.lru_cache(maxsize=8192)
def resolve(path: str) -> tuple[object, Text | None]:
    """The object a dotted path of an allowed module names, and why it is refused (or None).

    Every step is looked up here, in the grader, without running the owner's code, and
    what it reaches is judged: a module only when it is on the list, anything else only
    when its code lives in an allowed home (policy_table.py). A step that cannot be looked
    up so — a name a module or object makes on the fly, one read through a property, a
    name that does not exist — is refused.
    """
    parts = path.split(".")
    # From the longest listed module the path names: ``torch.autograd.gradcheck`` is a
    # module imported by that name, though the attribute of torch.autograd so named is
    # the function.
    start = next(
        (k for k in range(len(parts), 1, -1) if _module(".".join(parts[:k])) is not None), 1
    )
    current = _module(".".join(parts[:start]))
    if current is None:
        return _MISSING, says(
            "{name} is not a module graded code may import",
            "{name} 不是评分代码可以导入的模块",
            name=parts[0],
        )
    for index, attr in enumerate(parts[start:], start=start):
        reached = ".".join(parts[: index + 1])
        problem = attribute_problem(attr)
        if problem:
            return _MISSING, problem
        if isinstance(current, _Opaque):
            return _MISSING, _unresolved(reached)
        if isinstance(current, types.ModuleType):
            listed = ALLOWED_MODULES.get(current.__name__, ANY)
            if listed is not ANY and attr not in listed:
                return _MISSING, says(
                    "{path} is not on the list",
                    "{path} 不在允许使用的列表中",
                    path=f"{current.__name__}.{attr}",
                )
        current = _member(current, attr)
        if current is _MISSING:
            return _MISSING, _unresolved(reached)
        problem = _reach_problem(current, reached)
        if problem:
            return _MISSING, problem
    return current, None


_BY_NAME = (operator.attrgetter, operator.methodcaller)  # attributes named by strings


@functools.cache
def _called_only() -> tuple:
    """Functions called where they are named, never stored or passed: those the checks
    compare with, ``functools.wraps``, which copies attributes named by strings (it may
    only be given the function it wraps), and ``operator.attrgetter`` and ``methodcaller``,
    which reach attributes named by strings (written out, see ``_Reader.visit_Call``)."""
    import torch

    return (
        timeit.Timer,  # on a lambda or a function of one's own only (timer_calls)
        torch.equal,
        torch.allclose,
        torch.isclose,
        torch.testing.assert_close,
        functools.wraps,
        *_BY_NAME,
    )


def _written_out(arg: ast.expr, dotted: bool = False) -> bool:
    """A public attribute name written out as a string (``"grad"``, and where ``dotted``
    ``"weight.grad"``), so that it reaches just what ``obj.grad`` would; not a name held
    in a variable, nor a private or dunder one."""
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return False
    parts = arg.value.split(".") if dotted else [arg.value]
    return all(p.isidentifier() and attribute_problem(p) is None for p in parts)


def _names_problem(node: ast.Call, getter: object) -> bool:
    """Whether an attrgetter or methodcaller call names an attribute other than as
    ``_written_out`` says: ``attrgetter("grad", "weight.grad")`` and
    ``methodcaller("to", "cpu")`` pass."""
    if not node.args or any(isinstance(a, ast.Starred) for a in node.args):
        return True
    if getter is operator.attrgetter:
        return bool(node.keywords) or not all(_written_out(a, dotted=True) for a in node.args)
    return not _written_out(node.args[0])


def _is_value_kind(obj: object) -> str | None:
    """'module', 'class' or 'function' when an object may only be used by its attributes,
    called, subclassed or tested: modules, the classes every check's tensors, models and
    optimizers are made of, and the functions the checks compare with (patching them
    through an alias would change what the checks read), and ``functools.wraps``. Other
    classes (``saved_tensors_hooks``, ``nn.ReLU``) may be aliased and passed."""
    import torch

    if isinstance(obj, types.ModuleType):
        return "module"
    core = (torch.nn.Module, torch.autograd.Function)
    if isinstance(obj, type) and (
        issubclass(obj, torch.Tensor | torch.optim.Optimizer) or obj in core
    ):
        return "class"
    if any(obj is f for f in _called_only()):
        return "function"
    return None


def _allowed_decorators() -> tuple:
    import contextlib

    import torch
    from torch.autograd.function import once_differentiable

    return (
        contextlib.contextmanager,
        functools.wraps,
        functools.lru_cache,
        functools.cache,
        torch.no_grad,
        torch.enable_grad,
        torch.inference_mode,
        torch.set_grad_enabled,
        torch.autocast,  # torch.amp.autocast too: the same class
        once_differentiable,
    )


def _plain_argument(node: ast.expr) -> bool:
    """A decorator's argument that calls nothing: a literal, a name, or attributes of a name
    (``x.device.type``, ``torch.bfloat16``), whose steps are read as every attribute is."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Constant | ast.Name)


def _chain(node: ast.AST) -> tuple[str, list[str]] | None:
    """``a.b.c`` as ("a", ["b", "c"]); None when the chain does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, list(reversed(parts))
    return None


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call | ast.Starred):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _literal_form(node: ast.AST | None) -> bool:
    """Forms that run nothing when evaluated: literals, names, dotted names, and their
    tuples, lists, sets, dicts, negations, subscripts and ``|`` unions (annotations)."""
    if node is None or isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _chain(node) is not None
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub | ast.UAdd) and _literal_form(node.operand)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_literal_form(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(_literal_form(k) for k in node.keys) and all(map(_literal_form, node.values))
    if isinstance(node, ast.Subscript):
        return _literal_form(node.value) and _literal_form(node.slice)
    if isinstance(node, ast.BinOp):
        return (
            isinstance(node.op, ast.BitOr)
            and _literal_form(node.left)
            and _literal_form(node.right)
        )
    return False


DUNDER_IN_TEXT = re.compile(r"__\w+__")


def _string_problem(text: str) -> Text | None:
    """A string that could act as a dunder or private name: a dunder word, or a format field
    that reaches an attribute the rules refuse."""
    found = DUNDER_IN_TEXT.search(text)
    if found:
        return says("the string {text!r}", "字符串 {text!r}", text=found.group())
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text) if f]
    except ValueError:  # not a format string: str.format would refuse it too
        return None
    for name in fields:
        for attr in re.findall(r"\.([^.\[]*)", name):
            if attribute_problem(attr):
                return says("the format field {{{name}}}", "格式字段 {{{name}}}", name=name)
    return None


class _Reader(ast.NodeVisitor):
    """Collect every construct of one cell that is not on the list."""

    def __init__(self, context: Context):
        self.found: list[Violation] = []
        self.context = context
        self.inert: set[int] = set()  # nodes where a module or class may stand (see _mark)
        self.docstrings: set[int] = set()
        self.decorators: set[int] = set()
        self.own: set[int] = set()  # self._name nodes of the learner's own classes
        self.slots: set[int] = set()  # ``__slots__ = (...)`` targets in class bodies
        self.timers: set[int] = set()  # calls timeit.Timer may be (timer_calls)

    def flag(self, node: ast.AST, what: Text, name: str | None = None) -> None:
        """Record ``what`` at ``node``; ``name``: the refused name, for :data:`INSTEAD`."""
        instead = INSTEAD.get(name) if name else None
        if instead is None and name and _is_private(name):
            instead = OWN_NAMES_PUBLIC
        self.found.append(Violation(getattr(node, "lineno", 0), what, instead))

    # -- where a module or a class may appear: called, dereferenced, subclassed, tested
    def mark(self, tree: ast.AST) -> None:
        self.timers = timer_calls.accepted(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self.inert |= {id(place) for place in own_names.called_or_tested(node)}
            elif isinstance(node, ast.Attribute):
                self.inert.add(id(node.value))
            elif isinstance(node, ast.ClassDef):
                self.inert |= {id(b) for b in node.bases}
                self.slots |= {
                    id(target)
                    for statement in node.body
                    if isinstance(statement, ast.Assign) and _class_statement(statement)
                    for target in statement.targets
                    if isinstance(target, ast.Name) and target.id in CLASS_BODY_DUNDERS
                }
            elif isinstance(node, ast.ExceptHandler) and node.type is not None:
                self.inert |= {id(e) for e in [node.type, *getattr(node.type, "elts", [])]}
            elif isinstance(node, ast.MatchClass):
                self.inert.add(id(node.cls))
            elif isinstance(node, ast.arg) and node.annotation is not None:
                self.inert |= {id(n) for n in ast.walk(node.annotation)}
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.decorators |= {id(d) for d in node.decorator_list}
                if node.returns:
                    self.inert |= {id(n) for n in ast.walk(node.returns)}
            elif isinstance(node, ast.AnnAssign):
                self.inert |= {id(n) for n in ast.walk(node.annotation)}
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                self.docstrings.add(id(node.value))  # a bare string statement is inert

    # -- imports
    def _imported(self, node: ast.AST, path: str) -> None:
        _, problem = resolve(path)
        if problem:
            self.flag(
                node, says("import {path}: {why}", "导入 {path}：{why}", path=path, why=problem)
            )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not _module_allowed(alias.name):
                what = says("import {name}", "导入 {name}", name=alias.name)
                self.flag(node, what, alias.name.split(".")[0])
            elif alias.asname and _is_dunder(alias.asname):
                self.flag(node, _imported_as(alias.asname))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not _module_allowed(module):
            name = "." * node.level + module
            what = says("from {name} import …", "从 {name} 导入", name=name)
            self.flag(node, what, module.split(".")[0])
            return
        for alias in node.names:
            if alias.name == "*":
                self.flag(node, says("from {name} import *", "从 {name} 导入 *", name=module))
            else:
                self._imported(node, f"{module}.{alias.name}")
                if alias.asname and (_is_dunder(alias.asname) or _is_private(alias.asname)):
                    self.flag(node, _imported_as(alias.asname))

    # -- names and attributes
    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if _is_dunder(name) and id(node) not in self.slots:
            self.flag(node, _named_only(name))
        elif isinstance(node.ctx, ast.Store | ast.Del) and name in self.context.aliases:
            self.flag(node, says("rebinds the imported {name}", "重新绑定导入的 {name}", name=name))
        elif name in DECORATOR_BUILTINS and id(node) not in self.decorators:
            self.flag(
                node, says("{name} outside a decorator", "在装饰器以外使用 {name}", name=name)
            )
        elif name in self.context.aliases:
            self._used_as_value(node, self.context.aliases[name])

    def _used_as_value(self, node: ast.AST, path: str) -> None:
        obj, problem = resolve(path)
        if problem and problem.en.startswith(path + " "):  # it names the path already
            self.flag(node, problem)
        elif problem:
            self.flag(node, says("{path}: {why}", "{path}：{why}", path=path, why=problem))
        elif id(node) not in self.inert and _is_value_kind(obj):
            kind = _is_value_kind(obj)
            self.flag(
                node,
                says(
                    "the {kind} {path} used as a value",
                    "把{kind_zh} {path} 当作值使用",
                    kind=kind,
                    kind_zh=VALUE_KINDS[kind],
                    path=path,
                ),
            )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if id(node) in self.own:  # self._name of the learner's own class (own_names)
            self.generic_visit(node)
            return
        problem = attribute_problem(node.attr)
        if problem:
            self.flag(node, problem, node.attr)
            self.generic_visit(node)
            return
        chain = _chain(node)
        if chain and chain[0] in self.context.aliases:
            root, parts = chain
            if isinstance(node.ctx, ast.Store | ast.Del):
                self.flag(node, _changes(node))  # whatever it names
            else:
                self._used_as_value(node, ".".join([self.context.aliases[root], *parts]))
            return  # the chain is resolved as a whole
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self.docstrings:
            return
        value = node.value
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if isinstance(value, str):
            problem = _string_problem(value)
            if problem:
                self.flag(node, problem)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
            named = node.args[1] if len(node.args) > 1 else None
            attr = named.value if isinstance(named, ast.Constant) else "…"
            self._targets(node, [ast.Attribute(node.args[0], str(attr), ast.Store())])
        called = self._resolved(node.func)
        if (node.keywords or len(node.args) != 1) and called is functools.wraps:
            self.flag(
                node,
                says(
                    "{code} (names of attributes to copy, as strings)",
                    "{code}（以字符串给出要复制的属性名）",
                    code=_short(node),
                ),
            )
        elif called is timeit.Timer and id(node) not in self.timers:
            self.flag(
                node,
                says(
                    "{code} (timeit.Timer times a lambda or a function defined with def in the"
                    " same function, never a string or a name that could hold one, and is used"
                    " at once: timeit.Timer(f, timer=clock).repeat(...))",
                    "{code}（timeit.Timer 只能计时 lambda 或同一个函数里用 def 定义的函数，"
                    "不能是字符串或可能存着字符串的名字，并且要立即使用："
                    "timeit.Timer(f, timer=clock).repeat(...)）",
                    code=_short(node),
                ),
            )
        elif any(called is getter for getter in _BY_NAME) and _names_problem(node, called):
            self.flag(
                node,
                says(
                    "{code} (attribute names other than public names written as strings)",
                    "{code}（属性名必须是直接写出的公开名字字符串）",
                    code=_short(node),
                ),
            )
        self.generic_visit(node)

    def _resolved(self, node: ast.AST) -> object:
        """What a dotted name rooted at an import stands for; ``_MISSING`` otherwise."""
        chain = _chain(node)
        if chain is None or chain[0] not in self.context.aliases:
            return _MISSING
        obj, problem = resolve(".".join([self.context.aliases[chain[0]], *chain[1]]))
        return _MISSING if problem else obj

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg and (_is_dunder(node.arg)):
            self.flag(node.value, says("the keyword {arg}=", "关键字参数 {arg}=", arg=node.arg))
        self.generic_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:
            problem = attribute_problem(attr)
            if problem:
                self.flag(node, says("case …({attr}=…)", "模式匹配的类模式 …({attr}=…)", attr=attr))
        self.generic_visit(node)

    # -- definitions: what runs when they are made
    def _definition_time(self, node, args: ast.arguments, decorators: list[ast.expr]) -> None:
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            if not _literal_form(default):
                self.flag(default, NOT_LITERAL_DEFAULT)
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        for arg in filter(None, every):
            if _is_dunder(arg.arg):
                self.flag(node, says("the parameter {name}", "参数名 {name}", name=arg.arg))
            if arg.annotation is not None and not _literal_form(arg.annotation):
                self.flag(arg, NOT_NAME_ANNOTATION)
        for decorator in decorators:
            if not self._allowed_decorator(decorator):
                code = ast.unparse(decorator)
                self.flag(decorator, says("the decorator @{code}", "装饰器 @{code}", code=code))

    def _allowed_decorator(self, node: ast.expr) -> bool:
        target, args = node, []
        if isinstance(node, ast.Call):
            target, args = node.func, [*node.args, *(k.value for k in node.keywords)]
            if not all(_plain_argument(a) for a in args):
                return False
        if isinstance(target, ast.Name) and target.id in DECORATOR_BUILTINS and not args:
            return target.id not in self.context.aliases
        if isinstance(target, ast.Attribute) and target.attr in ("setter", "getter", "deleter"):
            return isinstance(target.value, ast.Name) and not args
        obj = self._resolved(target)
        if obj is functools.wraps and len(args) != 1:
            return False  # visit_Call names why
        return any(obj is allowed for allowed in _allowed_decorators())

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if _is_dunder(node.name) and node.name not in ALLOWED_DUNDER_DEFINITIONS:
            self.flag(node, says("def {name}", "定义函数 {name}", name=node.name))
        self._definition_time(node, node.args, node.decorator_list)
        if node.returns is not None and not _literal_form(node.returns):
            self.flag(node.returns, NOT_NAME_ANNOTATION)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._definition_time(node, node.args, [])
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if _is_dunder(node.name):
            self.flag(node, says("class {name}", "定义类 {name}", name=node.name))
        if node.keywords:
            self.flag(
                node,
                says(
                    "class {name}(…, {arg}=…)",
                    "类 {name} 的关键字参数 {arg}=",
                    name=node.name,
                    arg=node.keywords[0].arg,
                ),
            )
        for decorator in node.decorator_list:
            code = ast.unparse(decorator)
            self.flag(decorator, says("the class decorator @{code}", "类装饰器 @{code}", code=code))
        for base in node.bases:
            # a Timer of one's own would take strings past timer_calls
            if not (isinstance(base, ast.Name) or _chain(base)) or (
                self._resolved(base) is timeit.Timer
            ):
                code = ast.unparse(base)
                self.flag(base, says("the base class {code}", "基类 {code}", code=code))
        for statement in node.body:
            if not _class_statement(statement):
                self.flag(statement, CLASS_BODY_STATEMENT)
        self.generic_visit(node)

    # -- changes to what is not the learner's
    def _targets(self, node: ast.AST, targets: list[ast.AST]) -> None:
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute | ast.Subscript):
                    root = _root(part)
                    if root in self.context.aliases or root in self.context.course:
                        self.flag(node, _changes(part))
                        return

    def visit_Assign(self, node: ast.Assign) -> None:
        self._targets(node, node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._targets(node, [node.target])
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._targets(node, [node.target])
        if not _literal_form(node.annotation):
            self.flag(node.annotation, NOT_NAME_ANNOTATION)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._targets(node, node.targets)
        self.generic_visit(node)


def _class_statement(node: ast.stmt) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Pass):
        return True
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)
    if isinstance(node, ast.Assign):
        simple = all(isinstance(t, ast.Name) for t in node.targets)
        return simple and _literal_form(node.value)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and _literal_form(node.value)
    return False


def _refused_global(name: str, context: Context) -> Text | None:
    """Why a name that resolves to the module's globals (or builtins) is refused."""
    if name.startswith("."):  # symtable's own names (comprehension arguments)
        return None
    if name in context.course:
        return says("{name} (the course's own code)", "{name}（课程自己的代码）", name=name)
    if name in IPYTHON_NAMES or IPYTHON_HISTORY.fullmatch(name):
        return says(
            "{name} (IPython's history or shell)",
            "{name}（IPython 的历史记录或交互环境）",
            name=name,
        )
    if _is_dunder(name):
        return _named_only(name)
    if hasattr(builtins, name) and name not in ALLOWED_BUILTINS:
        if name in DECORATOR_BUILTINS:
            return None  # checked where it is used: only as a decorator
        return says(
            "{name} (a builtin graded code may not use)",
            "{name}（评分代码不能使用的内置函数）",
            name=name,
        )
    if _is_private(name) and name not in context.bound:
        return says(
            "{name} (a private name the notebook does not define)",
            "{name}（笔记本中没有定义的私有名称）",
            name=name,
        )
    return None


def _scope_violations(source: str, tree: ast.Module, context: Context) -> list[Violation]:
    """Names that reach the module's globals or the builtins, found with Python's own
    scope analysis: a local ``input`` is the learner's; a global ``getattr`` is not."""
    try:
        top = symtable.symtable(source, "<cell>", "exec")
    except SyntaxError:
        return []
    except (RecursionError, MemoryError):
        return [Violation(1, TOO_DEEP)]
    refused: dict[str, Text] = {}
    by_name: set[str] = set()
    pending = [top]
    while pending:
        table = pending.pop()
        module_level = table.get_type() == "module"
        for symbol in table.get_symbols():
            if symbol.get_name() in TRUSTED_BUILTINS and (
                symbol.is_assigned() or symbol.is_parameter() or symbol.is_imported()
            ):
                name = symbol.get_name()
                refused.setdefault(name, says("rebinds {name}", "重新绑定 {name}", name=name))
            # a class body reads a name from the globals until it assigns it (``x = getattr``)
            reaches_globals = (
                module_level
                or symbol.is_global()
                or (table.get_type() == "class" and symbol.is_referenced())
            )
            if reaches_globals and _by_name_builtin(symbol, module_level, context):
                by_name.add(symbol.get_name())
            elif reaches_globals:
                why = _refused_global(symbol.get_name(), context)
                if why:
                    refused.setdefault(symbol.get_name(), why)
        pending.extend(table.get_children())
    lines: dict[str, int] = {}
    for node in ast.walk(tree):
        name = _named(node)
        if name in refused and hasattr(node, "lineno"):
            lines[name] = min(lines.get(name, node.lineno), node.lineno)
    found = [Violation(lines.get(name, 1), why, INSTEAD.get(name)) for name, why in refused.items()]
    return found + _by_name_violations(tree, by_name)


def _by_name_builtin(symbol: symtable.Symbol, module_level: bool, context: Context) -> bool:
    """``getattr``, ``hasattr``, ``setattr`` or ``type`` used, not bound, by the cell: judged
    call by call (``_by_name_violations``)."""
    bound = module_level and (symbol.is_assigned() or symbol.is_imported())
    name = symbol.get_name()
    judged = name in BY_NAME_BUILTINS or name == CONTAINER_TYPE_BUILTIN
    return judged and not bound and name not in context.course


def _by_name_violations(tree: ast.Module, names: set[str]) -> list[Violation]:
    """Each use of a by-name builtin that is not a call naming a public attribute in a string
    written out: ``getattr(m, "bias", None)`` reads what ``m.bias`` reads; a name held in a
    variable, a private or dunder name, or the builtin passed as a value does not."""
    if not names:
        return []
    calls = {id(n.func): n for n in ast.walk(tree) if isinstance(n, ast.Call)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == CONTAINER_TYPE_BUILTIN and node.id in names:
            if not _rebuilds_container(calls.get(id(node)), calls):
                why = says(
                    "type other than as type(x)(…) on a comprehension or a display",
                    "type 只能写成 type(x)(…)，参数是推导式或列表、元组、集合、字典的字面形式",
                )
                found.append(Violation(node.lineno, why, INSTEAD.get(node.id)))
        elif isinstance(node, ast.Name) and node.id in names:
            call = calls.get(id(node))
            if call is None or not _names_written_out(call, BY_NAME_BUILTINS[node.id]):
                why = says(
                    "{name} other than called with a public attribute name written as a string",
                    "{name} 只能在调用时直接写出公开属性名的字符串",
                    name=node.id,
                )
                found.append(Violation(node.lineno, why, INSTEAD.get(node.id)))
    return found


_ITEMS = (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def _rebuilds_container(call: ast.Call | None, calls: dict[int, ast.Call]) -> bool:
    """``type(x)(items)``: one argument each, no keywords, the items a comprehension or a
    display, so that the class itself is never a value (see ``CONTAINER_TYPE_BUILTIN``)."""
    outer = calls.get(id(call)) if call is not None else None
    if outer is None or call.keywords or outer.keywords:
        return False
    if len(call.args) != 1 or isinstance(call.args[0], ast.Starred) or len(outer.args) != 1:
        return False
    return isinstance(outer.args[0], _ITEMS + _DISPLAYS)


def _names_written_out(call: ast.Call, counts: tuple[int, int]) -> bool:
    """A getattr, hasattr or setattr call as it reads: its own number of arguments, no
    keywords, the attribute ``_written_out``."""
    args = call.args
    if call.keywords or any(isinstance(a, ast.Starred) for a in args):
        return False
    return counts[0] <= len(args) <= counts[1] and _written_out(args[1])


def _named(node: ast.AST) -> str | None:
    """The name a node uses or binds, for the line of a violation found by name."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.arg):
        return node.arg
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return node.name
    return None


def python_source(cell_source: str) -> str:
    """The cell as Python, with IPython's magics and shell escapes translated as IPython does."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell_source)


TOO_DEEP = Text(
    f"a cell nested too deeply to read (more than {MAX_CELL_DEPTH} levels: a very long "
    "expression or deep brackets); split it into smaller statements",
    f"单元格嵌套太深，无法读取（超过 {MAX_CELL_DEPTH} 层：表达式过长或括号太深）；请拆成较小的语句",
)
TOO_LONG = Text(
    f"a cell of more than {MAX_CELL_CHARS:,} characters, too long to read",
    f"单元格超过 {MAX_CELL_CHARS:,} 个字符，太长，无法读取",
)


def _unreadable(why: Text) -> ast.Module:
    """An empty tree standing for a cell the reader refuses whole: it binds and reads
    nothing, and :func:`violations` names ``why``."""
    tree = ast.Module(body=[], type_ignores=[])
    tree.unreadable = why
    return tree


def _deeper_than(tree: ast.AST, most: int) -> bool:
    pending = [(tree, 1)]
    while pending:
        node, depth = pending.pop()
        if depth > most:
            return True
        pending.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False


def parse(cell_source: str) -> ast.Module | None:
    """The cell's syntax tree, or None when it is not valid Python (it would fail anyway).

    A cell too long or too deeply nested to read (Python's parser runs out of recursion
    on a 40,000-term sum) is not an error of the notebook's: it gives an empty tree that
    :func:`violations` refuses, so only that cell is voided and left out.
    """
    if len(cell_source) > MAX_CELL_CHARS:
        return _unreadable(TOO_LONG)
    try:
        tree = ast.parse(python_source(cell_source))
    except (SyntaxError, ValueError):
        return None
    except (RecursionError, MemoryError):
        return _unreadable(TOO_DEEP)
    return _unreadable(TOO_DEEP) if _deeper_than(tree, MAX_CELL_DEPTH) else tree


def unreadable(cell_source: str) -> Text | None:
    """Why a cell is refused whole, unread (too long, too deeply nested), or None."""
    return getattr(parse(cell_source), "unreadable", None)


def _bindings(statement: ast.stmt) -> set[str]:
    """Names a top-level statement binds in the module's namespace."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in statement.names}
    names, pending = set(), [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        pending.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, own_names.SCOPES))
    return names


def bound_names(tree: ast.Module) -> set[str]:
    """Names a cell binds in the module's namespace (what its top-level statements bind)."""
    return set().union(*(_bindings(statement) for statement in tree.body))


def _import_aliases(statement: ast.stmt) -> dict[str, str] | None:
    """What an import binds, or None when it imports something outside the list."""
    if isinstance(statement, ast.Import):
        if not all(_module_allowed(a.name) for a in statement.names):
            return None
        return {
            a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
            for a in statement.names
        }
    if isinstance(statement, ast.ImportFrom):
        module = statement.module or ""
        if statement.level or not _module_allowed(module):
            return None
        if any(resolve(f"{module}.{a.name}")[1] for a in statement.names if a.name != "*"):
            return None
        return {a.asname or a.name: f"{module}.{a.name}" for a in statement.names}
    return None


def context_of(learner: list[ast.Module], instructor: list[ast.Module]) -> Context:
    """The notebook's names: allowed imports anywhere, course names from the instructor's
    cells (imports outside the list, and definitions or aliases built on them).

    What the course's own helpers return is data a learner may use (``DEVICE =
    autograder.setup(…)``, ``digits = Digits()``); what other unlisted code returns
    (a matplotlib figure) is not, since nobody checked what it holds.
    """
    context = Context(aliases=dict(DEFAULT_ALIASES))
    foreign: set[str] = set()  # course names whose code is not the course's own
    for tree in instructor:
        for statement in tree.body:
            bound = _bindings(statement)
            aliases = _import_aliases(statement)
            if isinstance(statement, ast.Import | ast.ImportFrom):
                if aliases is None:
                    context.course |= bound
                    if not _imports_the_course(statement):
                        foreign |= bound
                else:
                    context.aliases.update(aliases)
                    context.course -= bound
                    foreign -= bound
            elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                _taint(context, foreign, bound, statement, statement)
            elif _simple_assignment(statement) and statement.value is not None:
                _taint(context, foreign, bound, statement.value, statement.value)
            # other statements (loops, plots, tuple unpacking) never run in the observer
    for tree in learner:
        for statement in tree.body:
            context.bound |= _bindings(statement)
            aliases = _import_aliases(statement)
            if aliases:
                context.aliases.update(aliases)
    imported = _imported_names(learner)
    for name in context.bound - imported:  # a learner's own variable, not an alias
        context.aliases.pop(name, None)
    context.own = own_names.own_classes(learner, lambda cls: _bases(cls, context))
    return context


def _bases(cls: ast.ClassDef, context: Context) -> list[type] | None:
    """A learner class's bases as allowed classes (``object`` none), or None where one is
    anything else (the learner's own class, a name the list does not reach)."""
    found = []
    for base in cls.bases:
        chain = _chain(base)
        if isinstance(base, ast.Name) and base.id == "object" and base.id not in context.bound:
            continue
        if chain is None or chain[0] not in context.aliases:
            return None
        obj, problem = resolve(".".join([context.aliases[chain[0]], *chain[1]]))
        if problem or not isinstance(obj, type):
            return None
        found.append(obj)
    return found


def _imports_the_course(statement: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(statement, ast.ImportFrom):
        return (statement.module or "").split(".")[0] == "autograder"
    return all(a.name.split(".")[0] == "autograder" for a in statement.names)


def _imported_names(trees: list[ast.Module]) -> set[str]:
    return {
        name
        for tree in trees
        for statement in tree.body
        if isinstance(statement, ast.Import | ast.ImportFrom)
        for name in _bindings(statement)
    }


def _mentions(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _simple_assignment(statement: ast.stmt) -> bool:
    """``name = value`` (or ``a = b = value``): what an instructor's cell may give the observer."""
    if isinstance(statement, ast.Assign):
        return all(isinstance(t, ast.Name) for t in statement.targets)
    return isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)


def _taint(context: Context, foreign: set[str], bound: set[str], node, value) -> None:
    """Mark ``bound`` as course names when ``node`` is built on them: any use of unlisted
    code, or a definition or alias (not a call's result) of the course's own."""
    on_foreign = _mentions(node, foreign)
    on_course = _mentions(node, context.course) and not isinstance(value, ast.Call)
    if on_foreign or on_course:
        context.course |= bound
        foreign |= bound if on_foreign else set()
    else:
        context.course -= bound
        foreign -= bound


def imported_names(trees: list[ast.Module]) -> Context:
    """The context of cells read on their own (the names of a whole notebook of them)."""
    return context_of(trees, [])


def violations(tree: ast.Module, context: Context) -> list[Violation]:
    """Every construct of one cell that is not on the list, in line order."""
    unreadable = getattr(tree, "unreadable", None)
    if unreadable is not None:
        return [Violation(1, unreadable)]
    reader = _Reader(context)
    reader.own = own_names.own_accesses(tree, context.own)
    try:
        reader.mark(tree)
        reader.visit(tree)
        found = reader.found + _scope_violations(ast.unparse(tree), tree, context)
    except (RecursionError, MemoryError):  # a tree built by hand, not by parse()
        return [Violation(1, TOO_DEEP)]
    unique = {(v.line, v.what): v for v in found}
    return sorted(unique.values(), key=lambda v: (v.line, v.what.en))


def statements(tree: ast.Module) -> list[str]:
    """A learner cell's top-level statements, one each: run in order, each on its own."""
    return [ast.unparse(node) for node in tree.body]


_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _constant_assignment(node: ast.AST) -> bool:
    if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
        return False
    try:
        ast.literal_eval(node.value)
    except ValueError:
        return False
    return True


def _instructor_kept(node: ast.stmt, needed: set[str]) -> bool:
    if isinstance(node, _DEFINITIONS) or _constant_assignment(node):
        return True
    return _simple_assignment(node) and _bindings(node) <= needed


def instructor_statements(tree: ast.Module, needed: set[str]) -> list[str]:
    """What an instructor's cell contributes to the observer: its definitions and literal
    constants, and assignments of names the learner's or the test cells' code reads
    (``DEVICE``); its demonstrations (plots, training runs) are left out."""
    return [ast.unparse(node) for node in tree.body if _instructor_kept(node, needed)]


def needed_names(reads: set[str], instructor: list[ast.Module]) -> set[str]:
    """The names the observer must define: those read, and what the instructor's
    assignments that define them read in turn (each assignment is read once)."""
    assignments = [  # (what must be needed for it to run, what it reads); constants always run
        (
            set() if _constant_assignment(node) else _bindings(node),
            global_reads(ast.Module(body=[node], type_ignores=[])),
        )
        for tree in instructor
        for node in tree.body
        if _simple_assignment(node) or _constant_assignment(node)
    ]
    needed = set(reads)
    while True:
        more = set().union(*(uses for binds, uses in assignments if binds <= needed))
        if more <= needed:
            return needed
        needed |= more


def global_reads(tree: ast.Module) -> set[str]:
    """Names a cell reads from the module's namespace (not its functions' own locals)."""
    try:
        top = symtable.symtable(ast.unparse(tree), "<cell>", "exec")
    except (SyntaxError, RecursionError, MemoryError):
        return set()
    found, pending = set(), [top]
    while pending:
        table = pending.pop()
        module_level = table.get_type() == "module"
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (module_level or symbol.is_global()):
                found.add(symbol.get_name())
        pending.extend(table.get_children())
    return found
