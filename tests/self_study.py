"""Each catalogued answer judged in self-study once per test run, the verdict shared.

test_lesson_checks judges every answer of tests/catalog in-process, as a learner's kernel
does; test_catalogue_graded compares the same verdict with what ``course-grade`` made of
the answer; test_feedback_wording reads the same failure's feedback in Chinese. All ask for
it through ``judge``: the first to need an answer (in whichever
pytest-xdist worker) runs it, its test cell after it, in English, and writes the verdict
into the run's shared folder; the others read it. Keyed by the code, the test cell and the
device, so an edit anywhere judges anew.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from lesson_cells import run

from autograder.common import i18n
from autograder.common.result import CheckFailed
from autograder.kernel.device import course_device


@dataclass(frozen=True)
class Verdict:
    """How the answer's test cell ended, in self-study, with its feedback in both languages."""

    passed: bool
    misconceptions: tuple[str, ...] = ()
    feedback: str = ""  # the CheckFailed's message when it failed
    raised: str | None = None  # another exception the answer or its check raised, as text
    feedback_zh: str = ""  # the same failure's feedback in Chinese

    def error(self) -> Exception | None:
        """What to raise for an answer that did not end in a verdict."""
        return None if self.raised is None else RuntimeError(self.raised)


def _verdict(code: str, tests: str) -> Verdict:
    previous = i18n._current
    i18n._current = "en"  # as tests/conftest.py's _english_feedback, wherever it is asked
    try:
        namespace = run(code)
        run(tests, namespace)
    except CheckFailed as failure:
        zh = failure.feedback("zh")
        return Verdict(False, tuple(failure.misconceptions), str(failure), feedback_zh=zh)
    except Exception as error:  # reported by the test that reads the verdict
        return Verdict(False, raised=f"{type(error).__name__}: {error}")
    finally:
        i18n._current = previous
    return Verdict(True)


class SelfStudy:
    """Verdicts by answer: in this process, then in the run's folder, else judged here."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.known: dict[str, Verdict] = {}

    def judge(self, code: str, tests: str) -> Verdict:
        device = str(course_device())
        key = hashlib.sha256("\0".join((device, code, tests)).encode()).hexdigest()
        if key in self.known:
            return self.known[key]
        path = self.folder / f"{key}.json" if self.folder else None
        if path is not None and path.is_file():
            found = json.loads(path.read_text(encoding="utf-8"))
            verdict = Verdict(**{**found, "misconceptions": tuple(found["misconceptions"])})
        else:
            verdict = _verdict(code, tests)
            if path is not None:  # whole or not at all: another worker may read it now
                part = path.with_suffix(f".{os.getpid()}.part")
                part.write_text(json.dumps(asdict(verdict)), encoding="utf-8")
                os.replace(part, path)
        self.known[key] = verdict
        return verdict
