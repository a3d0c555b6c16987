"""Check results as plain records; rendering them as text or HTML is separate.

A check returns a :class:`CheckResult`. ``require`` turns failed results into a
:class:`CheckFailed`, which nbgrader sees as a failing test cell and the learner
sees as expected-vs-found feedback in their language.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from autograder.i18n import Text, get_language
from autograder.misconceptions import lookup

_LABELS = {
    "failed": Text("Check failed", "检查未通过"),
    "expected": Text("expected", "期望"),
    "found": Text("found", "实际"),
    "misconception": Text("misconception", "常见误区"),
    "reread": Text("re-read", "请重读"),
}


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

    def message(self, lang: str | None = None) -> str:
        """Explain a failure in one language: what, expected, found, ID, section."""
        lang = lang or get_language()
        mark = "✓" if self.passed else "✗"
        lines = [f"{mark} {_render(self.what, lang)}"]
        if not self.passed:
            lines.append(f"    {_LABELS['expected'](lang)}: {_render(self.expected, lang)}")
            lines.append(f"    {_LABELS['found'](lang)}: {_render(self.found, lang)}")
            if self.misconception:
                entry = lookup(self.misconception)
                lines.append(
                    f"    {_LABELS['misconception'](lang)} {entry.id}: {entry.belief(lang)}"
                )
                lines.append(f"    {_LABELS['reread'](lang)}: {entry.section(lang)}")
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
        self.misconceptions = [f.misconception for f in failures if f.misconception]
        super().__init__(self.feedback())

    def feedback(self, lang: str | None = None) -> str:
        """The full feedback for this exercise in one language."""
        header = f"{_LABELS['failed'](lang)} — {self.exercise(lang)}"
        return "\n".join([header, *(f.message(lang) for f in self.failures)])


@dataclass(frozen=True)
class Passed:
    """Every check of one exercise passed; shown as the test cell's output."""

    exercise: Text

    def __repr__(self) -> str:
        return Text("✓ {ex}: all checks passed", "✓ {ex}：全部检查通过").format(
            ex=self.exercise()
        )()

    def _repr_html_(self) -> str:
        return f'<pre style="color:#1a7f37">{html.escape(repr(self))}</pre>'


def require(exercise: Text, results: list[CheckResult]) -> list[CheckResult]:
    """Raise CheckFailed naming every failed result; return the results when all pass."""
    failures = [r for r in results if not r.passed]
    if failures:
        raise CheckFailed(exercise, failures)
    return results
