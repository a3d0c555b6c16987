"""Every lesson's checks, in-process, on every device.

For each exercise: the reference solution passes the visible and hidden checks,
and every catalogued wrong answer fails with its misconception ID and section
named, in the learner's language, even when torch's comparison functions have
been reassigned.
"""

from __future__ import annotations

import importlib

import pytest
import torch
from conftest import SOLUTIONS
from lesson_cells import graded_cells, run

from autograder import course
from autograder.common.exercise import NotAttempted
from autograder.common.misconceptions import lookup
from autograder.common.result import CheckFailed

LESSONS = [source.parent.name for source in course.lesson_sources(SOLUTIONS)]


def _number(lesson: str) -> str:
    return lesson.split("_", 1)[0]


def _checks(lesson: str):
    return importlib.import_module(f"autograder.lessons.lesson{_number(lesson)}")


def _wrong_answers(lesson: str) -> dict[str, dict[str, str]]:
    return importlib.import_module(f"catalog.lesson{_number(lesson)}").WRONG_ANSWERS


CELLS = {lesson: graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb") for lesson in LESSONS}
EXERCISES = [
    pytest.param(lesson, exercise, id=f"{lesson}-ex{exercise.number}")
    for lesson in LESSONS
    for exercise in _checks(lesson).EXERCISES
]
WRONG = [
    pytest.param(lesson, grade_id, misconception, code, id=f"{grade_id}-{misconception}")
    for lesson in LESSONS
    for grade_id, by_id in _wrong_answers(lesson).items()
    for misconception, code in by_id.items()
]


def _grade_id(exercise) -> str:
    return f"ex{exercise.number}_{exercise.function}"


@pytest.mark.parametrize(("lesson", "exercise"), EXERCISES)
def test_exercise_has_its_cells_and_a_wrong_answer_per_misconception(lesson, exercise):
    grade_id = _grade_id(exercise)
    assert grade_id in CELLS[lesson] and f"{grade_id}_tests" in CELLS[lesson]
    assert f"def {exercise.function}(" in CELLS[lesson][grade_id].source
    assert set(_wrong_answers(lesson).get(grade_id, {})) == set(exercise.misconceptions)
    for misconception in exercise.misconceptions:
        assert lookup(misconception).lesson == lesson


@pytest.mark.parametrize(("lesson", "exercise"), EXERCISES)
def test_reference_solution_passes_visible_and_hidden_checks(lesson, exercise, device):
    grade_id = _grade_id(exercise)
    namespace = run(CELLS[lesson][grade_id].source)
    run(CELLS[lesson][f"{grade_id}_tests"].source, namespace)


@pytest.mark.parametrize(("lesson", "exercise"), EXERCISES)
def test_an_unfinished_stub_is_reported_as_not_attempted(lesson, exercise):
    def stub(*args, **kwargs):
        raise NotImplementedError()

    with pytest.raises(NotAttempted, match="not attempted"):
        exercise.check(stub)


@pytest.mark.parametrize(("lesson", "grade_id", "misconception", "code"), WRONG)
def test_wrong_answer_fails_and_names_its_misconception(
    lesson, grade_id, misconception, code, device
):
    namespace = run(code)
    with pytest.raises(CheckFailed) as failure:
        run(CELLS[lesson][f"{grade_id}_tests"].source, namespace)
    assert misconception in failure.value.misconceptions
    feedback = str(failure.value)
    assert misconception in feedback
    assert lookup(misconception).section.en in feedback
    assert "expected" in feedback and "found" in feedback


@pytest.mark.parametrize(("lesson", "grade_id", "misconception", "code"), WRONG)
def test_feedback_is_in_chinese_when_the_learner_chose_chinese(
    lesson, grade_id, misconception, code, monkeypatch
):
    monkeypatch.setenv("COURSE_LANG", "zh")
    namespace = run(code)
    with pytest.raises(CheckFailed) as failure:
        run(CELLS[lesson][f"{grade_id}_tests"].source, namespace)
    feedback = str(failure.value)
    assert "常见误区" in feedback and lookup(misconception).section.zh in feedback
    assert "期望" in feedback and "实际" in feedback


@pytest.mark.parametrize(("lesson", "grade_id", "misconception", "code"), WRONG)
def test_reassigning_torch_functions_does_not_change_a_verdict(
    lesson, grade_id, misconception, code, monkeypatch
):
    always = lambda *args, **kwargs: True  # noqa: E731 - the learner's trick
    for name in ("allclose", "equal", "isclose"):
        monkeypatch.setattr(torch, name, always)
    monkeypatch.setattr(torch.autograd, "grad", lambda *a, **k: None)
    namespace = run(code)
    with pytest.raises(CheckFailed):
        run(CELLS[lesson][f"{grade_id}_tests"].source, namespace)


def test_a_crashing_answer_becomes_feedback_not_a_traceback():
    from autograder.lessons import lesson01

    def to_device(batch, model, device, dtype):
        return batch.undefined_method()

    with pytest.raises(CheckFailed, match="AttributeError"):
        lesson01.check_to_device(to_device)
