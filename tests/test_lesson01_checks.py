"""Lesson 01's checks, in-process, on every device: solutions pass, wrong answers fail by ID."""

from __future__ import annotations

import pytest
import torch
from catalog.lesson01 import WRONG_ANSWERS
from conftest import SOLUTIONS
from lesson_cells import graded_cells, run

from autograder.lessons import lesson01
from autograder.misconceptions import lookup
from autograder.result import CheckFailed

CELLS = graded_cells(SOLUTIONS / "01_requires_grad" / "01_requires_grad.ipynb")
SOLUTION_IDS = {ex.function: f"ex{ex.number}_{ex.function}" for ex in lesson01.EXERCISES}
WRONG = [
    pytest.param(grade_id, misconception, code, id=f"{grade_id}-{misconception}")
    for grade_id, by_id in WRONG_ANSWERS.items()
    for misconception, code in by_id.items()
]


def test_every_exercise_has_its_cells_and_a_wrong_answer_per_misconception():
    for exercise in lesson01.EXERCISES:
        grade_id = SOLUTION_IDS[exercise.function]
        assert grade_id in CELLS and f"{grade_id}_tests" in CELLS
        assert set(WRONG_ANSWERS[grade_id]) == set(exercise.misconceptions)


@pytest.mark.parametrize("grade_id", SOLUTION_IDS.values())
def test_reference_solution_passes_visible_and_hidden_checks(grade_id, device):
    namespace = run(CELLS[grade_id].source)
    run(CELLS[f"{grade_id}_tests"].source, namespace)


@pytest.mark.parametrize(("grade_id", "misconception", "code"), WRONG)
def test_wrong_answer_fails_and_names_its_misconception(grade_id, misconception, code, device):
    namespace = run(code)
    with pytest.raises(CheckFailed) as failure:
        run(CELLS[f"{grade_id}_tests"].source, namespace)
    assert misconception in failure.value.misconceptions
    feedback = str(failure.value)
    assert misconception in feedback
    assert lookup(misconception).section.en in feedback
    assert "expected" in feedback and "found" in feedback


@pytest.mark.parametrize(("grade_id", "misconception", "code"), WRONG)
def test_feedback_is_in_chinese_when_the_learner_chose_chinese(
    grade_id, misconception, code, monkeypatch
):
    monkeypatch.setenv("COURSE_LANG", "zh")
    namespace = run(code)
    with pytest.raises(CheckFailed) as failure:
        run(CELLS[f"{grade_id}_tests"].source, namespace)
    feedback = str(failure.value)
    assert "常见误区" in feedback and lookup(misconception).section.zh in feedback
    assert "期望" in feedback and "实际" in feedback


@pytest.mark.parametrize(("grade_id", "misconception", "code"), WRONG)
def test_reassigning_torch_functions_does_not_change_a_verdict(
    grade_id, misconception, code, monkeypatch
):
    always = lambda *args, **kwargs: True  # noqa: E731 - the learner's trick
    for name in ("allclose", "equal", "isclose"):
        monkeypatch.setattr(torch, name, always)
    monkeypatch.setattr(torch.autograd, "grad", lambda *a, **k: None)
    namespace = run(code)
    with pytest.raises(CheckFailed):
        run(CELLS[f"{grade_id}_tests"].source, namespace)


def test_an_unfinished_stub_is_reported_as_not_attempted():
    from autograder.exercise import NotAttempted

    def product_grads(a, b):
        raise NotImplementedError()

    with pytest.raises(NotAttempted, match="not attempted"):
        lesson01.check_product_grads(product_grads)


def test_a_crashing_answer_becomes_feedback_not_a_traceback():
    def to_device(batch, model, device, dtype):
        return batch.undefined_method()

    with pytest.raises(CheckFailed, match="AttributeError"):
        lesson01.check_to_device(to_device)
