"""An nbgrader course directory made from the bilingual sources, in one language.

The build uses it to generate learner notebooks; tests and instructors use it to
autograde. Everything nbgrader needs is in the course's own ``nbgrader_config.py``,
so the plain ``nbgrader`` commands work in it.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nbformat

from autograder import bilingual
from autograder.common import domain

# What a learner finds in a solution cell, in the notebook's language.
CODE_STUBS = {
    "en": "# YOUR CODE HERE\nraise NotImplementedError()",
    "zh": "# 在这里写代码\nraise NotImplementedError()",
}
TEXT_STUBS = {"en": "YOUR ANSWER HERE", "zh": "在这里写下你的回答"}
CELL_TIMEOUT_S = 120
# The course keeps each lesson's bilingual source here too (instructor-only, like source/):
# grading recognises the instructor's cells in a notebook of either language.
BILINGUAL = "bilingual"
# JupyterLab and nbclient run a cell with this tag without stopping at its error, so
# Run All passes an unanswered exercise's failing test and reaches the self-check;
# nbgrader still reads the error as zero points.
RUN_ALL_CONTINUES_TAG = "raises-exception"

_CONFIG_TEMPLATE = """\
# nbgrader configuration of the autograd course ({lang}); written by autograder.course.
import os

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "autograd-course-{lang}"
c.ClearSolutions.code_stub = {{"python": {code_stub!r}}}
c.ClearSolutions.text_stub = {text_stub!r}
# A solution cell with starter code in its metadata (the capstone) gets that code, not the stub.
from autograder.starter import generate_preprocessors  # noqa: E402

c.GenerateAssignment.preprocessors = generate_preprocessors()
c.ExecutePreprocessor.timeout = {timeout}
c.Exchange.root = {exchange}
# Late work: the due date is nbgrader's (nbgrader db assignment add LESSON --duedate=...);
# the penalty is this plugin's, applied when a notebook is graded (README: "Late work").
c.AssignLatePenalties.plugin_class = "autograder.grader.pipeline.late.PercentPerDay"
c.PercentPerDay.percent_per_day = 10.0  # % of the points per day or part of a day late
c.PercentPerDay.max_percent = 100.0  # the most lateness takes, in %
c.PercentPerDay.grace_minutes = 0.0  # minutes after the due date that do not count
"""
# Without an exchange of its own, a course uses exchange/ beside this file, wherever it is moved.
_EXCHANGE_BESIDE = 'os.path.join(os.path.dirname(os.path.abspath(__file__)), "exchange")'


class CourseError(RuntimeError):
    """An nbgrader step failed for a course made by this module."""


def lesson_sources(solutions: Path) -> list[Path]:
    """Return the source notebook of every lesson: solutions/<lesson>/<lesson>.ipynb."""
    found = sorted(p / f"{p.name}.ipynb" for p in solutions.iterdir() if p.is_dir())
    missing = [p for p in found if not p.is_file()]
    if missing:
        raise CourseError(f"Lesson folders without their notebook: {missing}")
    return found


def is_test_cell(cell) -> bool:
    """An autograded test cell: nbgrader grades it, and it is code, not a written answer."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def let_run_all_continue(nb):
    """Tag every test cell so that Run All goes on past a failing one; return ``nb``."""
    for cell in filter(is_test_cell, nb.cells):
        tags = cell.metadata.setdefault("tags", [])
        if RUN_ALL_CONTINUES_TAG not in tags:
            tags.append(RUN_ALL_CONTINUES_TAG)
    return nb


def put_interpreter_bin_on_path() -> None:
    """nbgrader runs the ``alembic`` command, installed beside this interpreter; find it."""
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")


def create(
    root: Path, lang: str, solutions: Path, generate: bool = True, exchange: Path | None = None
) -> list[str]:
    """Make an nbgrader course in ``root`` for one language; return the assignment names.

    With ``generate``, nbgrader's generate_assignment runs for every lesson, which
    records the graded cells in the gradebook and writes ``release/``. The
    exchange (where ``nbgrader release_assignment`` puts lessons for learners)
    defaults to ``exchange/`` inside the course.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(
        _CONFIG_TEMPLATE.format(
            lang=lang,
            code_stub=CODE_STUBS[lang],
            text_stub=TEXT_STUBS[lang],
            timeout=CELL_TIMEOUT_S,
            exchange=repr(str(exchange.resolve())) if exchange else _EXCHANGE_BESIDE,
        ),
        encoding="utf-8",
    )
    assignments = []
    for source in lesson_sources(solutions):
        assignment = source.parent.name
        target = root / "source" / assignment / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        learner = let_run_all_continue(bilingual.split(bilingual.read(source), lang))
        learner = domain.said(learner, int(assignment.split("_", 1)[0]), lang)
        nbformat.write(learner, str(target))
        both = root / BILINGUAL / assignment / source.name
        both.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, both)
        assignments.append(assignment)
        if generate:
            generate_assignment(root, assignment)
    return assignments


def language(root: Path) -> str:
    """The language of a course made by :func:`create` ('en' or 'zh')."""
    config = (root / "nbgrader_config.py").read_text(encoding="utf-8")
    return "zh" if 'course_id = "autograd-course-zh"' in config else "en"


def gradebook_url(root: Path, wait_s: int = 0) -> str:
    """The course gradebook's database URL; ``wait_s`` lets parallel writers wait for the lock."""
    url = f"sqlite:///{root / 'gradebook.db'}"
    return f"{url}?timeout={wait_s}" if wait_s else url


def api(root: Path):
    """An NbGraderAPI reading the course's own nbgrader_config.py."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    put_interpreter_bin_on_path()
    config = Config(PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config())
    config.CourseDirectory.root = str(root)
    return NbGraderAPI(config=config)


def generate_assignment(root: Path, assignment: str) -> Path:
    """Run nbgrader's generate_assignment in the course; return the release folder."""
    result = api(root).generate_assignment(assignment, force=True)
    if not result["success"]:
        raise CourseError(f"nbgrader generate_assignment {assignment} failed:\n{result['log']}")
    return root / "release" / assignment
