"""What grading would refuse in an exercise's code, said by the self-study check cell.

While grading, every learner cell is read by the learner-code policy
(``autograder/grader/pipeline/policy.py``); a cell that uses anything outside its list earns
nothing for its exercise and is left out of the observer. The learner's kernel reads
the same code with the same policy before a check runs, so an answer that grading
would refuse fails here too, with the line, why, and what to write instead.

What the kernel knows of the notebook, and how it stands in for what the grader reads:

- **the learner's cells**: IPython's history (every cell the kernel ran, in order). A
  cell counts while it is the last one to bind some name (an edited cell's older
  version binds the same names, so it drops out);
- **the instructor's cells**: those identical to a code cell of the learner notebook the
  course generated (``notebooks/<lang>/<lesson>_*.ipynb``, the nbgrader release), as the
  grader recognises them against the source notebook; test cells are read by neither;
- **the exercise's code**: the cell whose code the checked function is (its
  ``__code__.co_filename`` names an IPython cell), the cell that last bound the
  exercise's name, and the learner cells they read names from, in turn. The grader voids
  the exercise for its own cell and leaves any refused cell out of the clean process, so
  an answer built on a refused helper fails there too.

Where it can still differ from the grader: the kernel knows the cells in the order they
ran, not their place in the notebook, and not their nbgrader ids; a cell deleted after it
ran still counts here, one never run does not; an exercise's own cell that was superseded
by a later definition of the function elsewhere is not read here, though grading voids the
exercise for it. Without the generated notebooks (the grading sandbox's first run, a copy of
the package alone) nothing is read here.
"""

from __future__ import annotations

import ast
import functools
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.common.i18n import Text
from autograder.common.result import CheckResult
from autograder.grader.pipeline import policy
from autograder.grader.pipeline.integrity import normal_source, visible_source

NOTEBOOKS = Path(__file__).resolve().parent.parent.parent / "notebooks"
LANGUAGES = ("en", "zh")

REFUSED_LINE = Text(
    "line {line} of your cell `{cell}`: `{code}`",
    "你的单元格 `{cell}` 第 {line} 行：`{code}`",
)
ONLY_LISTED = Text(
    "only what graded code may use (README: “What graded code may use”)",
    "只使用评分代码允许的写法（见 README“评分代码可以使用的写法”）",
)
REFUSED_WHEN_GRADED = Text(
    "{what} — grading refuses this line, and the exercise earns nothing",
    "{what}——评分时不允许这一行，这道练习不得分",
)
_SHOWN = 70  # characters of a line or a cell's first line shown in feedback


@dataclass(frozen=True)
class Template:
    """What the generated learner notebook of a lesson says about its code cells."""

    instructor: frozenset[str]  # the instructor's cells, as integrity.normal_source gives them
    tests: frozenset[str]  # the test cells as learners see them
    trees: tuple[ast.Module, ...]  # the instructor's cells of one language, in order


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


@functools.lru_cache(maxsize=32)
def template(lesson: str, lang: str) -> Template | None:
    """The instructor's and test cells of lesson ``lesson`` ("01"), both languages; the
    instructor's cells of ``lang`` in order. None when the notebooks are not here."""
    instructor, tests, trees = set(), set(), []
    for each in LANGUAGES:
        for path in sorted((NOTEBOOKS / each).glob(f"{lesson}_*.ipynb")):
            try:
                cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            except (OSError, ValueError, KeyError):
                continue
            for cell in cells:
                if cell.get("cell_type") != "code":
                    continue
                meta = cell.get("metadata", {}).get("nbgrader", {})
                source = _source(cell)
                if meta.get("grade") and not meta.get("solution") and meta.get("grade_id"):
                    tests.add(visible_source(source))
                elif not meta.get("solution"):
                    instructor.add(normal_source(source))
                    tree = _parse(source) if each == lang else None
                    if tree is not None:
                        trees.append(tree)
    if not instructor:
        return None
    return Template(frozenset(instructor), frozenset(tests), tuple(trees))


@functools.lru_cache(maxsize=4096)
def _parse(source: str) -> ast.Module | None:
    return policy.parse(source)


@functools.lru_cache(maxsize=4096)
def _reads(source: str) -> frozenset[str]:
    tree = _parse(source)
    return frozenset(policy.global_reads(tree)) if tree is not None else frozenset()


@functools.lru_cache(maxsize=4096)
def _binds(source: str) -> frozenset[str]:
    tree = _parse(source)
    return frozenset(policy.bound_names(tree)) if tree is not None else frozenset()


@dataclass(frozen=True)
class Cell:
    """One cell the kernel ran: its number in IPython's history, its code, whose it is."""

    number: int
    source: str
    kind: str  # "learner", "instructor" or "test"

    @property
    def tree(self) -> ast.Module | None:
        return _parse(self.source)


def _kind(source: str, known: Template) -> str:
    if visible_source(source) in known.tests:
        return "test"
    return "instructor" if normal_source(source) in known.instructor else "learner"


@dataclass(frozen=True)
class Refusal:
    """A line of the exercise's code that grading refuses: the cell, the policy's word."""

    cell: Cell
    violation: policy.Violation

    def result(self) -> CheckResult:
        """The refusal as a failed check: the line, why, and what to write instead."""
        lines = policy.python_source(self.cell.source).splitlines()
        number = self.violation.line
        code = lines[number - 1].strip() if 0 < number <= len(lines) else ""
        first = next((line.strip() for line in lines if line.strip()), "")
        what = REFUSED_LINE.format(line=number, cell=_short(first), code=_short(code))
        found = REFUSED_WHEN_GRADED.format(what=self.violation.what)
        return CheckResult(what, False, self.violation.instead or ONLY_LISTED, found)


def _short(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _cell_number(fn: object, shell) -> int | None:
    """The history number of the cell whose code ``fn`` is, when IPython compiled it."""
    fn = getattr(fn, "__func__", fn)  # a bound method
    fn = getattr(fn, "func", fn) if isinstance(fn, functools.partial) else fn
    code = getattr(fn, "__code__", None)
    filename = getattr(code, "co_filename", None)
    known = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if not isinstance(filename, str) or not isinstance(known, dict):
        return None
    number = known.get(filename)
    return number if isinstance(number, int) else None


class Notebook:
    """The notebook as the kernel ran it, read as the grader would read it."""

    def __init__(self, history: list[str], known: Template):
        self.cells = [
            Cell(number, source, _kind(source, known))
            for number, source in enumerate(history)
            if number and isinstance(source, str) and _parse(source) is not None
        ]
        self.by_number = {cell.number: cell for cell in self.cells}
        self.last: dict[str, Cell] = {}  # each name's last binder: what the kernel holds
        for cell in self.cells:
            for name in _binds(cell.source):
                self.last[name] = cell
        live = {id(cell) for cell in self.last.values()}
        learner = [c.tree for c in self.cells if c.kind == "learner" and id(c) in live]
        self.context = policy.context_of(learner, list(known.trees))

    def exercise_cells(self, function: str, number: int | None) -> list[Cell]:
        """The learner cells an exercise's function comes from: its own code's cell, the
        cell that bound its name, and the cells they read names from, in turn."""
        pending = [self.by_number.get(number) if number else None, self.last.get(function)]
        found: dict[int, Cell] = {}
        while pending:
            cell = pending.pop()
            if cell is None or cell.kind != "learner" or cell.number in found:
                continue
            found[cell.number] = cell
            pending.extend(self.last.get(name) for name in _reads(cell.source))
        return [found[n] for n in sorted(found)]

    def refusals(self, function: str, number: int | None) -> list[Refusal]:
        return [
            Refusal(cell, violation)
            for cell in self.exercise_cells(function, number)
            for violation in policy.violations(cell.tree, self.context)
        ]


_LAST: dict[tuple, list[CheckResult]] = {}


def refused(function: str, fn: object, lesson: str, lang: str) -> list[CheckResult]:
    """The lines of exercise ``function``'s code that grading would refuse, as failed
    results. ``lesson``: "01"; ``lang``: the notebook's. None outside an IPython kernel, nor
    where the course's generated notebooks are not (the grading sandbox's first run shows
    only the package: its verdict comes from the grader's own reading)."""
    shell = _shell()
    known = template(lesson, lang)
    if shell is None or known is None:
        return []
    history = list(getattr(shell.history_manager, "input_hist_raw", []))
    number = _cell_number(fn, shell)
    key = (function, number, len(history), lesson, lang)
    if key not in _LAST:
        notebook = Notebook(history, known)
        _LAST.clear()  # one notebook state at a time: the next cell run changes it
        _LAST[key] = [r.result() for r in notebook.refusals(function, number)]
    return _LAST[key]


def _shell():
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    shell = ipython.get_ipython()
    return shell if getattr(shell, "history_manager", None) is not None else None
