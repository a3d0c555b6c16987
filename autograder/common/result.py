"""Check results as plain records; rendering them as text or HTML is separate.

A check returns a :class:`CheckResult`. ``require`` turns failed results into a
:class:`CheckFailed`, which nbgrader sees as a failing test cell and the learner
sees as expected-vs-found feedback in their language.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from autograder.common.i18n import Text, get_language
from autograder.common.misconceptions import lookup

_LABELS = {
    "failed": Text("Check failed", "检查未通过"),
    "expected": Text("expected", "期望"),
    "found": Text("found", "实际"),
    "misconception": Text("misconception", "常见误区"),
    "reread": Text("re-read", "请重读"),
    "lesson": Text("lesson {n}, {section}", "第 {n} 课 {section}"),
}


_COLON = {"en": ": ", "zh": "："}
# Between "Check failed" and the exercise's title, which in Chinese holds a "——" of its own
_HEADER = {"en": " — ", "zh": "："}


def explain_misconception(misconception_id: str, lang: str) -> list[str]:
    """Two lines: the misconception ID with the wrong belief, and the section to re-read."""
    entry = lookup(misconception_id)
    colon = _COLON[lang]
    return [
        f"    {_LABELS['misconception'](lang)} {entry.id}{colon}{entry.belief(lang)}",
        f"    {_LABELS['reread'](lang)}{colon}"
        + _LABELS["lesson"].format(n=entry.lesson[:2], section=entry.section)(lang),
    ]


def _render(value: str | Text, lang: str) -> str:
    return value(lang) if isinstance(value, Text) else value


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check: what was looked at, and what it should have been."""

    what: str | Text
    passed: bool
    expected: str | Text = ""
    found: str | Text = ""
    misconception: str | None = None

    def title(self, lang: str | None = None) -> str:
        """What was checked, in one language."""
        return _render(self.what, lang or get_language())

    def message(self, lang: str | None = None, explain: bool = True) -> str:
        """Explain the result in one language: what, expected, found, and the misconception."""
        lang = lang or get_language()
        colon = _COLON[lang]
        lines = [f"{'✓' if self.passed else '✗'} {self.title(lang)}"]
        if not self.passed and (self.expected or self.found):  # "not attempted" has neither
            lines.append(f"    {_LABELS['expected'](lang)}{colon}{_render(self.expected, lang)}")
            lines.append(f"    {_LABELS['found'](lang)}{colon}{_render(self.found, lang)}")
            if explain and self.misconception:
                lines.extend(explain_misconception(self.misconception, lang))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.message()

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#cf222e"
        body = html.escape(self.message())
        return f'<pre style="color:{colour};white-space:pre-wrap">{body}</pre>'


class CheckFailed(AssertionError):
    """A learner's answer failed a check; the message is the feedback."""

    def __init__(self, exercise: Text, failures: list[CheckResult]):
        self.exercise = exercise
        self.failures = failures
        self.misconceptions = list(
            dict.fromkeys(f.misconception for f in failures if f.misconception)
        )
        super().__init__(self.feedback())

    def feedback(self, lang: str | None = None) -> str:
        """The full feedback for this exercise in one language; each misconception once."""
        lang = lang or get_language()
        lines = [f"{_LABELS['failed'](lang)}{_HEADER[lang]}{self.exercise(lang)}"]
        lines += [f.message(lang, explain=False) for f in self.failures]
        for misconception_id in dict.fromkeys(self.misconceptions):
            lines += explain_misconception(misconception_id, lang)
        return "\n".join(lines)

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback: the feedback, nothing of the course's code."""
        return self.feedback().splitlines()


def require(exercise: Text, results: list[CheckResult]) -> list[CheckResult]:
    """Raise CheckFailed naming every failed result; return the results when all pass."""
    failures = [r for r in results if not r.passed]
    if failures:
        raise CheckFailed(exercise, failures)
    return results
