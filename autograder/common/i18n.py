"""The learner's language, and text that exists in both course languages.

Every string a learner reads is a :class:`Text` holding English and Simplified
Chinese side by side, so a missing translation is a construction error rather
than a surprise at grading time.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

LANGUAGES = ("en", "zh")
_LANG_ENV = "COURSE_LANG"
_GRADING_LANG_ENV = "COURSE_GRADING_LANG"  # set by course-grade: feedback in the course language
_current: str | None = None
_CJK = re.compile(r"[\u4e00-\u9fff]")


class LanguageError(ValueError):
    """Raised for a language code the course does not have."""


def _normalise(code: str) -> str:
    code = code.strip().lower().replace("_", "-")
    if code.startswith("zh"):
        return "zh"
    if code.startswith("en"):
        return "en"
    raise LanguageError(
        f"Unknown course language {code!r}; use one of {', '.join(LANGUAGES)} "
        f"(未知的课程语言 {code!r}，可选：{', '.join(LANGUAGES)})."
    )


def set_language(code: str) -> str:
    """Choose the language of every message that follows; return the normalised code."""
    global _current
    _current = _normalise(code)
    return _current


def get_language() -> str:
    """Return the grading course's language, else set_language's, else $COURSE_LANG, else en.

    When course-grade runs a submission it sets $COURSE_GRADING_LANG, so feedback is
    in the course's language whatever the learner's notebook chose.
    """
    if os.environ.get(_GRADING_LANG_ENV):
        return _normalise(os.environ[_GRADING_LANG_ENV])
    if _current is not None:
        return _current
    return _normalise(os.environ.get(_LANG_ENV, "en") or "en")


@dataclass(frozen=True)
class Text:
    """One message in both course languages."""

    en: str
    zh: str

    def __post_init__(self) -> None:
        if not self.en.strip() or not self.zh.strip():
            raise ValueError(f"Text needs both languages: {self!r}")
        if not _CJK.search(self.zh):
            raise ValueError(f"The Chinese side contains no Chinese: {self.zh!r}")

    def __call__(self, lang: str | None = None) -> str:
        return getattr(self, lang or get_language())

    def format(self, **values: object) -> Text:
        """Fill the placeholders of each language; a Text value is filled in that language."""

        def side(lang: str) -> dict[str, object]:
            return {k: v(lang) if isinstance(v, Text) else v for k, v in values.items()}

        return Text(self.en.format(**side("en")), self.zh.format(**side("zh")))

    def __str__(self) -> str:
        return self()
