"""What learner code in a graded notebook may use, found by reading it (docs/grading-design.md).

Graded exercises need tensors, modules and plain Python; the observer runs every
learner cell that keeps to this list, so the list is what stands between learner
code and the observations. It is an allow-list: imports from the modules below,
the builtins below, names the notebook binds itself, attributes that are neither
dunder nor private nor one of the known ways out of the interpreter. Code that
runs when a definition is made (default values, decorators, class bodies,
annotations) keeps to forms that cannot call anything but the listed decorators.
Modules and torch's classes are used through their attributes, never handed
around as values, so nothing can patch them. IPython's magics are read after
IPython's own translation (``%time x`` becomes a ``get_ipython()`` call, refused).

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
import re
import string
import symtable
import types
from dataclasses import dataclass, field

from autograder.common.i18n import Text
from autograder.grader.reasons import says

ANY = None  # every public name of the module (modules it holds must be listed too)
ALLOWED_MODULES: dict[str, frozenset[str] | None] = {
    **dict.fromkeys(
        """torch torch.nn torch.nn.functional torch.nn.init torch.nn.utils torch.autograd
        torch.autograd.graph torch.autograd.function torch.autograd.functional torch.func
        torch.optim torch.optim.lr_scheduler torch.cuda torch.mps torch.backends
        torch.backends.cuda torch.backends.cudnn torch.backends.mps torch.accelerator
        torch.utils torch.utils.data torch.linalg torch.fft torch.special torch.testing
        numpy numpy.random numpy.linalg
        math cmath statistics itertools random""".split(),
        ANY,
    ),
    "time": frozenset(
        "time perf_counter perf_counter_ns monotonic monotonic_ns process_time sleep".split()
    ),
    # lesson 09: the documented entry points only (the modules also hold warnings, uuid, ...)
    "torch.utils.checkpoint": frozenset(
        "checkpoint checkpoint_sequential CheckpointError noop_context_fn".split()
    ),
    "torch.amp": frozenset("autocast GradScaler is_autocast_available".split()),
    "copy": frozenset({"copy", "deepcopy"}),
    "contextlib": frozenset({"contextmanager", "nullcontext", "ExitStack"}),
    "functools": frozenset({"partial", "reduce", "wraps"}),
    "collections": frozenset("OrderedDict defaultdict Counter deque namedtuple".split()),
}
ALLOWED_BUILTINS = frozenset(
    """abs all any ascii bin bool bytearray bytes callable chr complex dict divmod enumerate
    filter float format frozenset hash hex id int oct ord
    isinstance issubclass iter len list map max min next object pow print range repr reversed
    round set slice sorted str sum super tuple zip NotImplemented Ellipsis
    ArithmeticError AssertionError AttributeError Exception IndexError KeyError KeyboardInterrupt
    LookupError MemoryError
    NotImplementedError OverflowError RuntimeError StopIteration TypeError ValueError
    ZeroDivisionError Warning UserWarning""".split()
)
DECORATOR_BUILTINS = frozenset({"staticmethod", "classmethod", "property"})
# Builtins the reader trusts where they stand (isinstance's second argument may be a class):
# learner code may not rebind them.
TRUSTED_BUILTINS = frozenset({"isinstance", "issubclass", *DECORATOR_BUILTINS})
# What the kernel's namespace holds beyond the builtins: IPython's history and shell.
IPYTHON_NAMES = frozenset("In Out get_ipython exit quit display _ih _oh _dh _i _ii _iii".split())
IPYTHON_HISTORY = re.compile(r"_i?\d+")
ALLOWED_DUNDER_ATTRIBUTES = frozenset({"__init__", "__enter__", "__exit__"})
ALLOWED_PRIVATE_ATTRIBUTES = frozenset({"_version", "_base"})
ALLOWED_DUNDER_DEFINITIONS = frozenset(
    """__init__ __len__ __getitem__ __iter__ __next__ __enter__ __exit__ __call__ __repr__
    __str__""".split()
)
# Public attribute names that lead out of the interpreter's sandbox of objects: frames,
# code, files, foreign memory, loaders, processes, the interpreter's own modules, global
# module hooks. Dunder and private names are refused before these are consulted.
REFUSED_ATTRIBUTES = frozenset(
    """f_globals f_locals f_back f_builtins f_code f_trace tb_frame tb_next save load loads
    tofile fromfile from_file savetxt loadtxt savez savez_compressed memmap open_memmap
    genfromtxt fromregex load_library ctypes ctypeslib cffi ops classes library overrides
    system popen spawn fork sys os builtins importlib gc inspect subprocess mro hub jit
    serialization package multiprocessing distributed fx compiler cpp_extension
    register_module_forward_hook register_module_forward_pre_hook
    register_module_full_backward_hook register_module_full_backward_pre_hook
    register_module_backward_hook register_module_buffer_registration_hook
    register_module_module_registration_hook register_module_parameter_registration_hook
    compile compile_shader load_metallib cudart caching_allocator_alloc caching_allocator_delete
    change_current_allocator CUDAPluggableAllocator PyTorchFileReader PyTorchFileWriter
    import_ir_module import_ir_module_from_buffer get_file_path DataSource swap_tensors
    set_module TorchFunctionMode TorchDispatchMode DisableTorchFunction
    DisableTorchFunctionSubclass ExcludeDispatchKeyGuard
    """.split()
)
REFUSED_ATTRIBUTE_PREFIXES = ("gi_", "cr_", "ag_", "co_")

# What a violation says, in both languages (names and code in it stay as written).
NOT_LITERAL_DEFAULT = Text(
    "a default value that is not a literal or a name", "默认值既不是字面量也不是名称"
)
NOT_NAME_ANNOTATION = Text("an annotation that is not a name", "类型注解不是名称")
CLASS_BODY_STATEMENT = Text(
    "a class body statement other than a method or a literal",
    "类体中除方法和字面量以外的语句",
)
VALUE_KINDS = {"module": "模块", "class": "类"}  # _is_value_kind's words, in Chinese


def _named_only(name: str) -> Text:
    return says("{name}", "名称 {name}", name=name)


def _imported_as(name: str) -> Text:
    return says("import … as {name}", "以别名 {name} 导入", name=name)


def _changes(node: ast.AST) -> Text:
    return says("changes {code}", "修改 {code}", code=ast.unparse(node))


@dataclass(frozen=True)
class Violation:
    """One construct outside the list: where it is and what it is."""

    line: int
    what: Text

    def describe(self) -> Text:
        return says("line {line}: {what}", "第 {line} 行：{what}", line=self.line, what=self.what)


@dataclass
class Context:
    """What the rest of the notebook says about names a cell uses.

    ``aliases``: names bound by allowed imports, to the dotted path they stand for;
    ``course``: names bound to the course's own code by the instructor's cells;
    ``bound``: names learner cells bind at module level (their own private helpers).
    """

    aliases: dict[str, str] = field(default_factory=dict)
    course: set[str] = field(default_factory=set)
    bound: set[str] = field(default_factory=set)


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
        if name in ALLOWED_PRIVATE_ATTRIBUTES:
            return None
        return says(".{name} (private)", "私有属性 .{name}", name=name)
    if name in REFUSED_ATTRIBUTES or name.startswith(REFUSED_ATTRIBUTE_PREFIXES):
        return _attribute(name)
    return None


def _attribute(name: str) -> Text:
    return says(".{name}", "属性 .{name}", name=name)


def _module_allowed(name: str) -> bool:
    return name in ALLOWED_MODULES


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


def _member(module: types.ModuleType, attr: str):
    """A module's attribute without running its lazy ``__getattr__``; a submodule by name."""
    value = vars(module).get(attr, _MISSING)
    if value is _MISSING:
        full = f"{module.__name__}.{attr}"
        try:
            found = importlib.util.find_spec(full) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            return _module(full) or types.ModuleType(full)  # a module, listed or not
    return value


@functools.lru_cache(maxsize=8192)
def resolve(path: str) -> tuple[object, Text | None]:
    """The object a dotted path of an allowed module names, and why it is refused (or None).

    Resolution stops at the first object that is not a module: beyond it, only the
    attribute names are checked. An unknown name resolves to ``_MISSING`` (it would
    fail at run time anyway).
    """
    parts = path.split(".")
    current = _module(parts[0])
    if current is None:
        return _MISSING, says(
            "{name} is not a module graded code may import",
            "{name} 不是评分代码可以导入的模块",
            name=parts[0],
        )
    for index, attr in enumerate(parts[1:], start=1):
        problem = attribute_problem(attr)
        if problem:
            return _MISSING, problem
        if not isinstance(current, types.ModuleType):
            return _MISSING, None
        listed = ALLOWED_MODULES.get(current.__name__, ANY)
        if listed is not ANY and attr not in listed:
            return _MISSING, says(
                "{path} is not on the list",
                "{path} 不在允许使用的列表中",
                path=f"{current.__name__}.{attr}",
            )
        current = _member(current, attr)
        if isinstance(current, types.ModuleType) and not _module_allowed(current.__name__):
            return _MISSING, says(
                "{path} (module {module})",
                "{path}（模块 {module}，不在允许之列）",
                path=".".join(parts[: index + 1]),
                module=current.__name__,
            )
    return current, None


def _is_value_kind(obj: object) -> str | None:
    """'module' or 'class' when an object may only be used by its attributes, called,
    subclassed or tested: modules, and the classes every check's tensors, models and
    optimizers are made of (patching them through an alias would change what the checks
    read). Other classes (``saved_tensors_hooks``, ``nn.ReLU``) may be aliased and passed."""
    import torch

    if isinstance(obj, types.ModuleType):
        return "module"
    core = (torch.nn.Module, torch.optim.Optimizer, torch.autograd.Function)
    if isinstance(obj, type) and (issubclass(obj, torch.Tensor) or obj in core):
        return "class"
    return None


def _allowed_decorators() -> tuple:
    import contextlib

    import torch
    from torch.autograd.function import once_differentiable

    return (
        contextlib.contextmanager,
        functools.wraps,
        torch.no_grad,
        torch.enable_grad,
        torch.inference_mode,
        torch.set_grad_enabled,
        once_differentiable,
    )


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

    def flag(self, node: ast.AST, what: Text) -> None:
        self.found.append(Violation(getattr(node, "lineno", 0), what))

    # -- where a module or a class may appear: called, dereferenced, subclassed, tested
    def mark(self, tree: ast.AST) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self.inert.add(id(node.func))
                if isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass"):
                    for arg in node.args[1:]:
                        self.inert |= {id(e) for e in ([arg, *getattr(arg, "elts", [])])}
            elif isinstance(node, ast.Attribute):
                self.inert.add(id(node.value))
            elif isinstance(node, ast.ClassDef):
                self.inert |= {id(b) for b in node.bases}
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
                self.flag(node, says("import {name}", "导入 {name}", name=alias.name))
            elif alias.asname and _is_dunder(alias.asname):
                self.flag(node, _imported_as(alias.asname))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not _module_allowed(module):
            name = "." * node.level + module
            self.flag(node, says("from {name} import …", "从 {name} 导入", name=name))
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
        if _is_dunder(name):
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
        if problem:
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
        problem = attribute_problem(node.attr)
        if problem:
            self.flag(node, problem)
            self.generic_visit(node)
            return
        chain = _chain(node)
        if chain and chain[0] in self.context.aliases:
            root, parts = chain
            self._used_as_value(node, ".".join([self.context.aliases[root], *parts]))
            if isinstance(node.ctx, ast.Store | ast.Del):
                self.flag(node, _changes(node))
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
            if not all(isinstance(a, ast.Constant | ast.Name) for a in args):
                return False
        if isinstance(target, ast.Name) and target.id in DECORATOR_BUILTINS and not args:
            return target.id not in self.context.aliases
        if isinstance(target, ast.Attribute) and target.attr in ("setter", "getter", "deleter"):
            return isinstance(target.value, ast.Name) and not args
        chain = _chain(target)
        if chain is None or chain[0] not in self.context.aliases:
            return False
        obj, problem = resolve(".".join([self.context.aliases[chain[0]], *chain[1]]))
        return problem is None and any(obj is allowed for allowed in _allowed_decorators())

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
            if not (isinstance(base, ast.Name) or _chain(base)):
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
    refused: dict[str, Text] = {}
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
            if reaches_globals:
                why = _refused_global(symbol.get_name(), context)
                if why:
                    refused.setdefault(symbol.get_name(), why)
        pending.extend(table.get_children())
    lines: dict[str, int] = {}
    for node in ast.walk(tree):
        name = _named(node)
        if name in refused and hasattr(node, "lineno"):
            lines[name] = min(lines.get(name, node.lineno), node.lineno)
    return [Violation(lines.get(name, 1), why) for name, why in refused.items()]


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


def parse(cell_source: str) -> ast.Module | None:
    """The cell's syntax tree, or None when it is not valid Python (it would fail anyway)."""
    try:
        return ast.parse(python_source(cell_source))
    except (SyntaxError, ValueError):
        return None


_OWN_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


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
        pending.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _OWN_SCOPES))
    return names


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
    return context


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
    reader = _Reader(context)
    reader.mark(tree)
    reader.visit(tree)
    found = reader.found + _scope_violations(ast.unparse(tree), tree, context)
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
    except SyntaxError:
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
