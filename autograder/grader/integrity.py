"""Integrity checks on a submission, made before its code runs, by reading it.

They look for what would earn credit without solving anything: graded test
cells that were deleted, edited or stripped of their nbgrader metadata; code
that reassigns functions of torch, autograder or builtins; objects whose
``__eq__`` or ``__bool__`` always say yes; and code that names course files.
Each flag names the cell, and the graded cells it touches earn no credit.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass

PROTECTED_MODULES = {"torch", "autograder", "builtins", "__builtins__", "checks", "nbgrader"}
ALWAYS_YES_METHODS = {"__eq__", "__ne__", "__bool__", "__len__", "__contains__"}
COURSE_FILE_HINTS = (
    "gradebook.db",
    "nbgrader_config",
    "/source/",
    "source/",
    "solutions/",
    "submitted/",
    "autograded/",
    "release/",
)


@dataclass(frozen=True)
class Flag:
    """One integrity problem: what, where, and which graded cells lose their credit."""

    kind: str
    cell: str
    detail: str
    voids: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.kind} in {self.cell}: {self.detail}"

    def as_dict(self) -> dict:
        return asdict(self)


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _is_test(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution") and cell.cell_type == "code"


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def structural_flags(source_nb, submitted_nb) -> list[Flag]:
    """Test cells of the source that are missing, edited or stripped in the submission."""
    submitted = {_grade_id(c): c for c in submitted_nb.cells if _grade_id(c)}
    bare_sources = {_normal(c.source) for c in submitted_nb.cells if not _grade_id(c)}
    flags = []
    for cell in source_nb.cells:
        if not _is_test(cell):
            continue
        gid = _grade_id(cell)
        mine = submitted.get(gid)
        if mine is None:
            visible = _normal(cell.source.split("### BEGIN HIDDEN TESTS")[0])
            stripped = any(visible and visible in bare for bare in bare_sources)
            kind = "metadata-stripped test cell" if stripped else "deleted test cell"
            flags.append(Flag(kind, gid, "the graded test cell is not intact", (gid,)))
            continue
        visible = _normal(cell.source.split("### BEGIN HIDDEN TESTS")[0])
        if _normal(mine.source) != visible:
            flags.append(
                Flag("edited test cell", gid, "its code differs from the original", (gid,))
            )
    return flags


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _protected_aliases(tree: ast.AST) -> set[str]:
    aliases = set(PROTECTED_MODULES)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PROTECTED_MODULES:
                    aliases.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in PROTECTED_MODULES:
                for alias in node.names:
                    aliases.add(alias.asname or alias.name)
    return aliases


def _code_problems(source: str, hints: tuple[str, ...]) -> list[tuple[str, str]]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    aliases = _protected_aliases(tree)
    problems = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and _root_name(target) in aliases:
                problems.append(("reassigns a protected function", ast.unparse(target)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in {"setattr", "delattr"} and node.args:
                if _root_name(node.args[0]) in aliases:
                    problems.append(("reassigns a protected function", ast.unparse(node)))
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name in ALWAYS_YES_METHODS:
                    returns = [n for n in ast.walk(item) if isinstance(n, ast.Return)]
                    if returns and all(
                        isinstance(r.value, ast.Constant) and r.value.value is True for r in returns
                    ):
                        problems.append(("object that always says yes", f"{node.name}.{item.name}"))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if any(hint in node.value for hint in COURSE_FILE_HINTS + hints):
                problems.append(("names course files", repr(node.value)[:80]))
    return problems


def code_flags(submitted_nb, course_paths: tuple[str, ...] = ()) -> list[Flag]:
    """Learner cells whose code tampers with the checks or names course files.

    ``course_paths`` are absolute paths (the course root) that learner code has
    no reason to name. A flagged cell voids every graded test cell after it.
    """
    flags = []
    for index, cell in enumerate(submitted_nb.cells):
        if cell.cell_type != "code" or _is_test(cell):
            continue
        later_tests = tuple(
            _grade_id(c) for c in submitted_nb.cells[index + 1 :] if _is_test(c) and _grade_id(c)
        )
        where = _grade_id(cell) or f"cell {index}"
        for kind, detail in _code_problems(cell.source, course_paths):
            flags.append(Flag(kind, where, detail, later_tests))
    return flags
