"""The self-check a learner runs at any time: one line per exercise, never a crash.

Missing or edited cells are expected in a learner's notebook; they are reported
as "could not run" with the reason, and the remaining exercises still run.
In a kernel that ``course-grade`` runs, it checks nothing again: every test cell above
already shows its graded result, which is what the learner's feedback is about.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from autograder.common.exercise import Exercise, NotAttempted
from autograder.common.i18n import Text, get_language
from autograder.common.protocol import MODE
from autograder.common.result import CheckFailed

STATUS_TEXT = {
    "passed": Text("passed", "通过"),
    "failed": Text("failed", "未通过"),
    "not attempted": Text("not attempted", "尚未作答"),
    "could not run": Text("could not run", "无法运行"),
}
GRADING = "COURSE_GRADING"  # set in the kernels course-grade runs (grader/sandbox/kernel.py)
NOT_REPEATED = Text(
    "Self-check: not run again while grading; each exercise's test cell above shows its "
    "graded result",
    "自测：评分时不再重复运行；上面每道练习的测试单元格显示了它的评分结果",
)
_MARK = {"passed": "✓", "failed": "✗", "not attempted": "·", "could not run": "!"}


@dataclass(frozen=True)
class ExerciseStatus:
    """One exercise's self-check outcome, as plain data."""

    exercise: Exercise
    status: str
    detail: str = ""
    misconceptions: tuple[str, ...] = ()

    def line(self, lang: str | None = None) -> str:
        lang = lang or get_language()
        ids = f" [{', '.join(self.misconceptions)}]" if self.misconceptions else ""
        colon = "：" if lang == "zh" else ": "
        dash = "——" if lang == "zh" else " — "
        detail = f"{dash}{self.detail}" if self.detail else ""
        return (
            f"{_MARK[self.status]} {self.exercise.heading(lang)}{colon}"
            f"{STATUS_TEXT[self.status](lang)}{ids}{detail}"
        )


def _missing(name: str) -> Text:
    return Text(
        "`{name}` is not defined: run its cell, or restore it if it was deleted",
        "`{name}` 未定义：请运行它所在的单元格；若已删除，请恢复该单元格",
    ).format(name=name)


def check_one(exercise: Exercise, namespace: dict) -> ExerciseStatus:
    """Run one exercise's visible checks; classify the outcome instead of raising."""
    fn = namespace.get(exercise.function)
    if fn is None:
        return ExerciseStatus(exercise, "could not run", _missing(exercise.function)())
    MODE.quiet = True
    try:
        exercise.check(fn)
    except NotAttempted:
        return ExerciseStatus(exercise, "not attempted")
    except CheckFailed as failure:
        first = failure.failures[0].title() if failure.failures else ""
        return ExerciseStatus(exercise, "failed", first, tuple(failure.misconceptions))
    except Exception as error:  # a broken cell must not stop the summary
        return ExerciseStatus(exercise, "could not run", f"{type(error).__name__}: {error}")
    finally:
        MODE.quiet = False
    return ExerciseStatus(exercise, "passed")


class SelfCheckReport(list):
    """The statuses of all exercises; prints as a text table, renders as HTML in Jupyter."""

    def __repr__(self) -> str:
        passed = sum(s.status == "passed" for s in self)
        title = Text("Self-check: {p}/{n} exercises pass", "自测：{p}/{n} 道练习通过")
        lines = [title.format(p=passed, n=len(self))(), *(s.line() for s in self)]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(repr(self))}</pre>"


class NotRunWhileGrading(SelfCheckReport):
    """What the self-check cell shows in a graded notebook."""

    def __repr__(self) -> str:
        return NOT_REPEATED()


def run_self_check(exercises: Iterable[Exercise], namespace: dict) -> SelfCheckReport:
    """Check every exercise against the notebook's namespace and return the report; while
    grading, say where the graded results are instead (the checks already ran, and the
    grade comes from the judge, not from this kernel)."""
    if os.environ.get(GRADING):
        return NotRunWhileGrading()
    return SelfCheckReport(check_one(exercise, namespace) for exercise in exercises)


def self_checker(exercises: Iterable[Exercise]) -> Callable[[dict], SelfCheckReport]:
    """A lesson's ``self_check``: the notebook calls ``lessonNN.self_check(globals())``."""

    def self_check(namespace: dict) -> SelfCheckReport:
        """Run every exercise's visible checks against the notebook's namespace."""
        return run_self_check(exercises, namespace)

    return self_check
