"""What an exercise is to the checks: a learner function's name, a check, its IDs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder.common.i18n import Text
from autograder.common.result import CheckFailed


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
            f"练习 {self.number} —— {self.title.zh}（{self.function}）",
        )


def numbered(namespace: dict[str, Any], *rows: tuple[str, str, str, str]) -> tuple[Exercise, ...]:
    """A lesson's exercises in notebook order, numbered from 1; each row is ``(function,
    English title, Chinese title, "ID ID")`` and its check is ``check_<function>`` of the
    lesson module's ``namespace``."""
    return tuple(
        Exercise(number, function, Text(en, zh), namespace[f"check_{function}"], tuple(ids.split()))
        for number, (function, en, zh, ids) in enumerate(rows, 1)
    )


class NotAttempted(CheckFailed):
    """The learner's function is still the stub nbgrader left in its place."""
