"""Every catalogued answer graded through ``course-grade``, and judged as self-study judges it.

test_lesson_checks judges every answer of tests/catalog in-process (self-study, and split
observe/judge). Here each one is also graded the way a class is: real notebooks, the real
``course-grade grade`` with its sandbox, kernel, policy, observer and judge, the points in
nbgrader's gradebook. Each verdict must be the self-study one: the same pass or fail and the
same misconception IDs; a wrong answer earns 0 for its exercise and its feedback names its
misconception, a right one earns the exercise's points, and the learner's own kernel agrees
(no "first run disagrees" flag).

To make that affordable, answers are packed: learner ``packedNN`` submits the NN-th answer
(wrong ones first, then right ones) of every exercise of a lesson in one notebook, since
exercises are judged independently, and the whole class is graded in one run. An answer
that changes state for the exercises after it is graded alone instead (``GRADED_ALONE``).
The packed notebooks keep the setup cell and every nbgrader cell but leave out the lesson's
other code cells (its demonstrations, which a learner may delete too): self-study judges an
answer without them, and they are the same in every notebook, so running them ~160 times
adds time and no verdict. Whole lessons are graded by test_grading, test_course_grade's
demo class and the demo term.
"""

from __future__ import annotations

import functools
import importlib
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import NOTEBOOKS, SOLUTIONS
from lesson_cells import graded_cells
from nbgrader_course import autograded_outputs, class_points, exercises_only, submission, submit
from processes import BIN, stop_group, venv_env

from autograder import course
from autograder.grader.pipeline import hidden_inputs, records
from autograder.kernel.device import course_device

pytestmark = pytest.mark.notebooks

LESSONS = [source.parent.name for source in course.lesson_sources(SOLUTIONS)]
DEVICE = course_device().type  # where grading runs here, and self-study with it

# The course's key for hidden inputs, fixed so that each run draws the same ones (a miss
# found here can be reproduced); a real course draws its own.
HIDDEN_INPUTS_KEY = b"test_catalogue_graded: fixed key".ljust(32, b".")
# Answers graded in a notebook of their own, with why: (grade_id, catalogued name) -> reason.
GRADED_ALONE: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Answer:
    """One catalogued answer to one exercise, and what it must earn."""

    lesson: str
    grade_id: str
    name: str
    code: str
    right: bool
    misconception: str | None

    @property
    def test_id(self) -> str:
        return f"{self.grade_id}_tests"


def _answers(lesson: str) -> dict[str, list[Answer]]:
    """Per exercise, its catalogued answers that show on this device: wrong ones, then right."""
    catalogue = importlib.import_module(f"catalog.lesson{lesson.split('_', 1)[0]}")
    answers: dict[str, list[Answer]] = {}
    for right, entries in ((False, catalogue.WRONG), (True, catalogue.RIGHT)):
        for grade_id, listed in entries.items():
            answers.setdefault(grade_id, []).extend(
                Answer(lesson, grade_id, a.name, a.code, right, getattr(a, "misconception", None))
                for a in listed
                if DEVICE in a.devices
            )
    return answers


def _class(lesson: str) -> dict[str, list[Answer]]:
    """Who submits which answers of the lesson: packed learners, then those graded alone."""
    packed: dict[str, list[Answer]] = {}
    alone = []
    for answers in _answers(lesson).values():
        index = 0
        for answer in answers:
            if (answer.grade_id, answer.name) in GRADED_ALONE:
                alone.append(answer)
                continue
            packed.setdefault(f"packed{index:02d}", []).append(answer)
            index += 1
    return {**packed, **{f"alone{n:02d}": [answer] for n, answer in enumerate(alone)}}


CLASSES = {lesson: _class(lesson) for lesson in LESSONS}
ANSWERS = [
    pytest.param(student, answer, id=f"{answer.grade_id}-{answer.name}")
    for lesson in LESSONS
    for student, answers in CLASSES[lesson].items()
    for answer in answers
]


@functools.cache
def _cells(lesson: str) -> dict:
    """The lesson's graded cells, read once per run (its tests read them ~100 times)."""
    return graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb")


@dataclass
class Graded:
    """What grading and self-study concluded, per learner of each lesson."""

    root: Path
    records: dict[tuple[str, str], records.GradeRecord]
    # (lesson, grade_id, name) -> (passed, misconception IDs), or what the answer raised
    self_study: dict[tuple[str, str, str], tuple[bool, set[str]] | Exception]
    # Points, read from the gradebook once per lesson (a gradebook opened per test was most
    # of the tests' time), and graded outputs, read once per learner: each learner's ~5
    # answers' tests read the same ones.
    _points: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    _outputs: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    def points(self, lesson: str, student: str) -> dict[str, float]:
        if lesson not in self._points:
            self._points[lesson] = class_points(self.root, lesson)
        return self._points[lesson][student]

    def outputs(self, lesson: str, student: str) -> dict[str, str]:
        if (lesson, student) not in self._outputs:
            self._outputs[lesson, student] = autograded_outputs(self.root, lesson, student)
        return self._outputs[lesson, student]


@pytest.fixture(scope="module")
def graded(tmp_path_factory, make_course, self_study) -> Graded:
    """The class of every lesson graded in one ``course-grade grade`` run; meanwhile every
    answer judged in-process in self-study mode."""
    base = tmp_path_factory.mktemp("catalogue")
    root = make_course(base / "course", "en")
    (root / hidden_inputs.KEY).parent.mkdir(parents=True, exist_ok=True)
    (root / hidden_inputs.KEY).write_bytes(HIDDEN_INPUTS_KEY)
    for lesson in LESSONS:
        learner = NOTEBOOKS / "en" / f"{lesson}.ipynb"
        for student, answers in CLASSES[lesson].items():
            nb = exercises_only(submission(learner, {a.grade_id: a.code for a in answers}))
            submit(root, student, lesson, nb)
    log = base / "course-grade.log"
    with log.open("w") as output:
        grading = subprocess.Popen(
            [str(BIN / "course-grade"), "grade", str(root), *LESSONS, "--workers", "2"],
            env=venv_env(),
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        # the verdict of each answer's test cell in-process, as test_lesson_checks judges it
        # (tests/self_study.py: judged once per run, whichever file asks first)
        verdicts = {}
        for lesson in LESSONS:
            cells = _cells(lesson)
            for answers in CLASSES[lesson].values():
                for answer in answers:
                    verdict = self_study.judge(answer.code, cells[answer.test_id].source)
                    key = (lesson, answer.grade_id, answer.name)
                    # an answer that raised is reported by its own test
                    verdicts[key] = verdict.error() or (verdict.passed, set(verdict.misconceptions))
        grading.wait(timeout=3600)
    finally:
        stop_group(grading)
    assert grading.returncode == 0, log.read_text()[-3000:]
    graded_records = {
        (lesson, record.student): record
        for lesson in LESSONS
        for record in records.load(root, lesson)
    }
    return Graded(root, graded_records, verdicts)


@pytest.mark.parametrize(("student", "answer"), ANSWERS)
def test_graded_verdict_is_the_self_study_verdict(graded, student, answer):
    verdict = graded.self_study[answer.lesson, answer.grade_id, answer.name]
    if isinstance(verdict, Exception):
        raise verdict
    passed, named = verdict
    assert passed == answer.right, "self-study judges it wrongly (see test_lesson_checks)"
    record = graded.records[answer.lesson, student]
    assert record.status in ("graded", "flagged"), (record.status, record.reason)
    verdict = record.verdicts[answer.test_id]
    together = [a.name for a in CLASSES[answer.lesson][student] if a != answer]
    assert (verdict["passed"], set(verdict["misconceptions"])) == (passed, named), (
        f"graded in one notebook with {together}: if one of them changes what this one "
        f"meets, grade it alone (GRADED_ALONE); flags: {record.flags}"
    )
    disagreements = [
        f
        for f in record.flags
        if f["kind"] == "first run disagrees" and f["cell"] == answer.test_id
    ]
    assert not disagreements, disagreements
    earned = graded.points(answer.lesson, student)[answer.test_id]
    if answer.right:
        cells = _cells(answer.lesson)
        assert earned == cells[answer.test_id].metadata["nbgrader"]["points"]
    else:
        assert earned == 0
        if answer.misconception:
            feedback = graded.outputs(answer.lesson, student)[answer.test_id]
            assert answer.misconception in feedback, feedback[:600]
