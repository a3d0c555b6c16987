"""The reference's states, computed ahead of time and shipped as data.

Processes that run learner code (the learner's kernel, the grading sandbox, a classroom
learner's server) hold no reference: a visible check compares what the learner's
function did with the state the reference left in the same case, read from
``autograder/lessons/expected/lessonNN.wire``. ``make build`` writes those files from the
judge's references (``autograder.references.expected``); a test fails when they are
stale. They are in ``wire.py``'s format: plain data, read without looking up any class.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

from autograder.common import trusted, wire
from autograder.common.i18n import Text
from autograder.common.result import CheckFailed, CheckResult

FOLDER = Path(__file__).resolve().parent.parent / "lessons" / "expected"
NOT_SHIPPED = Text(
    "this check has no expected result shipped with the course ({key}): restore the test "
    "cell as it was released, or ask your instructor",
    "课程没有附带这个检查的预期结果（{key}）：请把测试单元格恢复成发布时的样子，或询问老师",
)


def lesson_of(spec: Any) -> str:
    """'lesson01' for a check defined in autograder.lessons.lesson01."""
    return type(spec).__module__.rpartition(".")[2]


def on_cpu(spec: Any) -> Any:
    """The check without its device: references always run on the CPU."""
    fields = {f.name for f in dataclasses.fields(spec)}
    return dataclasses.replace(spec, device=None) if "device" in fields else spec


def key(spec: Any) -> str:
    """Which check, whatever device it observes on: the key of its shipped states."""
    return on_cpu(spec).key()


def case_key(case: dict, again: bool = False) -> str:
    """One case of a check, by the parameters its seed drew (``again``: its second call)."""
    return trusted.repr_(sorted(case.items())) + (" again" if again else "")


def path(lesson: str) -> Path:
    return FOLDER / f"{lesson}.wire"


@functools.cache
def load(lesson: str) -> dict:
    """{check key: {case key: the reference's state}} for one lesson; empty if none shipped."""
    file = path(lesson)
    if not file.is_file():
        return {}
    return wire.loads(file.read_bytes())


def lookup(spec: Any, case: dict, again: bool = False) -> dict:
    """The reference's state in ``case``, as shipped; a clear failure when there is none."""
    states = load(lesson_of(spec)).get(key(spec), {})
    found = states.get(case_key(case, again))
    if found is None:
        what = Text("finding the expected result", "查找预期结果")
        text = NOT_SHIPPED.format(key=key(spec))
        raise CheckFailed(spec.heading, [CheckResult(what, False, "", text)])
    return found


def forget() -> None:
    """Read the files again on next use (after ``make build`` wrote new ones)."""
    load.cache_clear()
