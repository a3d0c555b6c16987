"""What learner code in a graded notebook may not do, found by reading it (docs/grading-design.md).

Graded exercises need tensors, modules and plain Python. They never need to look
inside the interpreter, build code at run time, touch files or processes, or reach
torch's dispatch machinery — and those are exactly the tools that forge a verdict.
So learner cells may not use them, in any spelling the AST shows: the rules below
read names, attributes, imports and definitions, after IPython's own translation
of magics (``%time x`` becomes a ``get_ipython()`` call, which is refused too).

Cells whose code is the instructor's own (identical to a cell of the source
notebook) are exempt: demonstrations may use what learners may not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

FORBIDDEN_MODULES = frozenset(
    """sys os gc ctypes inspect builtins importlib types marshal pickle dill cloudpickle code
    codeop subprocess socket signal threading _thread multiprocessing concurrent asyncio atexit
    io pathlib shutil tempfile glob mmap fcntl resource pty faulthandler traceback tracemalloc
    linecache runpy pkgutil zipimport site sysconfig ast dis opcode copyreg shelve dbm sqlite3
    urllib http ftplib smtplib requests IPython ipykernel jupyter_client zmq nbgrader nbclient
    nbformat traitlets autograder torchvision.io""".split()
)
FORBIDDEN_TORCH = (
    "torch._",
    "torch.overrides",
    "torch.utils._",
    "torch.library",
    "torch.multiprocessing",
    "torch.hub",
    "torch.utils.cpp_extension",
    "torch.fx",
    "torch.compiler",
    "torch.distributed",
    "torch.cuda.memory._",
    "torch.serialization",
    "torch.package",
    "torch.jit",
)
FORBIDDEN_NAMES = frozenset(
    """__import__ exec eval compile globals locals vars open breakpoint input get_ipython
    setattr delattr __builtins__ __loader__ __spec__ memoryview exit quit help""".split()
)
FORBIDDEN_ATTRIBUTES = frozenset(
    """f_globals f_locals f_back f_builtins f_code f_trace gi_frame gi_code cr_frame cr_code
    ag_frame ag_code tb_frame tb_next co_code save load tofile fromfile from_file savetxt
    loadtxt savez savez_compressed memmap open_memmap genfromtxt overrides library
    TorchFunctionMode TorchDispatchMode system popen spawn fork""".split()
)
ALLOWED_DUNDER_ATTRIBUTES = frozenset({"__init__", "__name__"})
ALLOWED_PRIVATE_ATTRIBUTES = frozenset({"_version"})
ALLOWED_DUNDER_DEFINITIONS = frozenset(
    """__init__ __len__ __getitem__ __iter__ __next__ __enter__ __exit__ __call__ __repr__
    __str__""".split()
)


@dataclass(frozen=True)
class Violation:
    """One forbidden construct: where it is and what it is."""

    line: int
    what: str

    def describe(self) -> str:
        return f"line {self.line}: {self.what}"


def _module_forbidden(name: str) -> bool:
    root = name.split(".")[0]
    if root in FORBIDDEN_MODULES or name in FORBIDDEN_MODULES:
        return True
    return any(
        name.startswith(p) if p.endswith("_") else name == p or name.startswith(p + ".")
        for p in FORBIDDEN_TORCH
    )


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


class _Reader(ast.NodeVisitor):
    """Collect every violation in one cell's syntax tree."""

    def __init__(self, module_names: set[str]):
        self.found: list[Violation] = []
        self.module_names = module_names  # names bound to imported modules, in any cell

    def flag(self, node: ast.AST, what: str) -> None:
        self.found.append(Violation(getattr(node, "lineno", 0), what))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if _module_forbidden(alias.name):
                self.flag(node, f"import {alias.name}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or _module_forbidden(module):
            self.flag(node, f"from {'.' * node.level}{module} import …")
            return
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if _module_forbidden(full) or alias.name.startswith("_") or alias.name == "*":
                self.flag(node, f"from {module} import {alias.name}")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in FORBIDDEN_NAMES:
            self.flag(node, node.id)
        elif _is_dunder(node.id) and node.id != "__name__":
            self.flag(node, node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = node.attr
        if _is_dunder(name):
            if name not in ALLOWED_DUNDER_ATTRIBUTES:  # super().__init__() is allowed
                self.flag(node, f".{name}")
        elif name.startswith("_") and name not in ALLOWED_PRIVATE_ATTRIBUTES:
            self.flag(node, f".{name}")
        elif name in FORBIDDEN_ATTRIBUTES:
            self.flag(node, f".{name}")
        else:
            dotted = _dotted(node)
            if dotted and _module_forbidden(dotted):
                self.flag(node, dotted)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name):
            name = node.func.id
            if name in ("getattr", "hasattr") and (
                len(node.args) < 2 or not isinstance(node.args[1], ast.Constant)
            ):
                self.flag(node, f"{name} with a computed attribute name")
            if name == "type" and len(node.args) != 1:
                self.flag(node, "type() that builds a class")
        self.generic_visit(node)

    def _defines(self, node, name: str) -> None:
        if _is_dunder(name) and name not in ALLOWED_DUNDER_DEFINITIONS:
            self.flag(node, f"def {name}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._defines(node, node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node.keywords:
            self.flag(node, f"class {node.name}(…, {node.keywords[0].arg}=…)")
        self.generic_visit(node)

    def _targets(self, node: ast.AST, targets: list[ast.AST]) -> None:
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute | ast.Subscript):
                    if _root(part) in self.module_names:
                        self.flag(node, f"changes {ast.unparse(part)}")
                        return

    def visit_Assign(self, node: ast.Assign) -> None:
        self._targets(node, node.targets)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._targets(node, [node.target])
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._targets(node, [node.target])
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._targets(node, node.targets)
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        for name in node.names:
            if name in self.module_names:
                self.flag(node, f"global {name}")


def python_source(cell_source: str) -> str:
    """The cell as Python, with IPython's magics and shell escapes translated as IPython does."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell_source)


def parse(cell_source: str) -> ast.Module | None:
    """The cell's syntax tree, or None when it is not valid Python (it would fail anyway)."""
    try:
        return ast.parse(python_source(cell_source))
    except SyntaxError:
        return None


def imported_names(trees: list[ast.Module]) -> set[str]:
    """Names bound to imported modules or objects anywhere in the notebook, plus ``torch``."""
    names = {"torch", "np", "nn", "F", "math", "numpy"}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def violations(tree: ast.Module, module_names: set[str]) -> list[Violation]:
    """Every forbidden construct in one cell."""
    reader = _Reader(module_names)
    reader.visit(tree)
    return reader.found


_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _constant_assignment(node: ast.AST) -> bool:
    if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
        return False
    try:
        ast.literal_eval(node.value)
    except ValueError:
        return False
    return True


def definitions(tree: ast.Module) -> list[str]:
    """Only the definitions of a cell, one statement each: imports, def, class, literals."""
    return [
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, _KEPT) or _constant_assignment(node)
    ]
