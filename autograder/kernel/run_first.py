"""A test cell run before its exercise's cell: say which cell to run, not IPython's NameError.

Learners often run a test cell first, or restart the kernel and run only the test.
The call ``checks.check_x(x, ...)`` then fails on the undefined name ``x``, and
IPython shows a traceback into the test cell. When the missing name is an exercise's
function, the learner sees one line in their language instead; any other error keeps
IPython's own traceback.
"""

from __future__ import annotations

import sys

from autograder.common.i18n import Text

RUN_FIRST = Text(
    "`{name}` is not defined yet: run the cell of {exercise} first (the cell with "
    "`def {name}(`), then run this cell again.",
    "`{name}` 还没有定义：请先运行{exercise}的单元格（含 `def {name}(` 的那个），"
    "再重新运行这个单元格。",
)


def exercise_named(name: str | None):
    """The exercise, of a lesson whose checks are loaded, whose function is ``name``."""
    lessons = [m for key, m in sys.modules.items() if key.startswith("autograder.lessons.lesson")]
    for lesson in sorted(lessons, key=lambda m: m.__name__, reverse=True):  # 08 before 03
        for exercise in getattr(lesson, "EXERCISES", ()):
            if exercise.function == name:
                return exercise
    return None


def _explain(shell, etype, value, tb, tb_offset=None) -> None:
    """IPython's custom-exception handler: it shows the error itself.

    IPython displays an exception's ``_render_traceback_`` lines in place of its
    traceback; giving the NameError that method keeps the error an error (the cell
    still fails, Run All still stops) with one readable line.
    """
    exercise = exercise_named(getattr(value, "name", None))
    if exercise is not None:
        line = RUN_FIRST.format(name=exercise.function, exercise=exercise.heading)()
        value._render_traceback_ = lambda: [line]
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


def install() -> None:
    """In an IPython kernel, explain undefined exercise functions; elsewhere, do nothing."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((NameError,), _explain)
