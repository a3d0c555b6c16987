"""What an exercise is to the checks: a learner function's name, a check, its IDs.

Calling the learner's function goes through :func:`call_learner`, so that an
unfinished stub, a crash, or an error typical of a misconception becomes
feedback instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder.common.i18n import Text
from autograder.common.result import CheckFailed, CheckResult

NO_EXCEPTION = Text("no exception", "不抛出异常")
NOT_ATTEMPTED = Text(
    "not attempted yet: the function still raises NotImplementedError",
    "尚未作答：函数仍然抛出 NotImplementedError",
)


@dataclass(frozen=True)
class Exercise:
    """One auto-graded exercise: the function the learner writes and how it is checked."""

    number: int
    function: str
    title: Text
    check: Callable[..., Any]
    misconceptions: tuple[str, ...]

    @property
    def heading(self) -> Text:
        """'Exercise 3 — title' in both languages, as feedback headers show it."""
        return Text(
            f"Exercise {self.number} — {self.title.en} ({self.function})",
            f"练习 {self.number} — {self.title.zh}（{self.function}）",
        )


class NotAttempted(CheckFailed):
    """The learner's function is still the stub nbgrader left in its place."""


def call_learner(
    exercise: Text,
    fn: Callable[..., Any],
    *args: Any,
    classify: Callable[[BaseException], str | None] = lambda error: None,
    **kwargs: Any,
) -> Any:
    """Call the learner's function; turn any exception into feedback that names a cause."""
    if not callable(fn):
        raise CheckFailed(
            exercise,
            [
                CheckResult(
                    Text("the answer is a function", "答案是一个函数"),
                    False,
                    "function",
                    type(fn).__name__,
                )
            ],
        )
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise NotAttempted(
            exercise, [CheckResult(NOT_ATTEMPTED, False, "—", "NotImplementedError")]
        ) from None
    except Exception as error:  # any learner error becomes feedback
        what = Text("calling {name}(...)", "调用 {name}(...)").format(
            name=getattr(fn, "__name__", "function")
        )
        found = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"
        raise CheckFailed(
            exercise, [CheckResult(what, False, NO_EXCEPTION, found, classify(error))]
        ) from error
