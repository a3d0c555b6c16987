"""Feedback a learner reads is clean in both languages (issue 22, item 6).

Every catalogued wrong answer's feedback, in Chinese: each misconception ID once,
floats rounded, no untranslated descriptions of values, the lesson named where it
says what to re-read. An unanswered exercise does not show an empty "expected", and a
test cell run before its exercise's cell says which cell to run.
"""

from __future__ import annotations

import importlib
import re

import nbformat
import pytest
import torch
from conftest import SOLUTIONS
from lesson_cells import graded_cells, run

from autograder import course
from autograder.common.i18n import set_language
from autograder.common.misconceptions import lookup
from autograder.common.result import CheckFailed

LESSONS = [source.parent.name for source in course.lesson_sources(SOLUTIONS)]
NUMBER = re.compile(r"\d+\.\d+")


def _unrounded(text: str) -> list[str]:
    """Numbers with more significant digits than feedback shows (6; 0.30000001192092896 has 17)."""
    return [n for n in NUMBER.findall(text) if len(n.replace(".", "").lstrip("0")) > 8]


# How an observed value used to be described, in English whatever the language.
ENGLISH_DESCRIPTIONS = re.compile(r"\b(list|tuple) of \d+ items\b|\b(bool|int|float|str): ")


def _wrong_answers():
    for lesson in LESSONS:
        catalogue = importlib.import_module(f"catalog.lesson{lesson[:2]}")
        for grade_id, answers in catalogue.WRONG.items():
            for wrong in answers:
                if "cpu" in wrong.devices:
                    yield pytest.param(lesson, grade_id, wrong, id=f"{grade_id}-{wrong.name}")


@pytest.fixture
def chinese():
    set_language("zh")
    yield
    set_language("en")


@pytest.mark.parametrize(("lesson", "grade_id", "wrong"), list(_wrong_answers()))
def test_chinese_feedback_is_clean(lesson, grade_id, wrong, chinese, monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    torch.manual_seed(0)
    cells = graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb")
    namespace = run(wrong.code)
    with pytest.raises(CheckFailed) as failure:
        run(cells[f"{grade_id}_tests"].source, namespace)
    feedback = failure.value.feedback("zh")
    ids = failure.value.misconceptions
    assert len(ids) == len(set(ids)), ids
    assert not _unrounded(feedback), feedback
    assert not ENGLISH_DESCRIPTIONS.findall(feedback), feedback
    for misconception in ids:
        entry = lookup(misconception)
        assert f"第 {entry.lesson[:2]} 课 {entry.section.zh}" in feedback


def test_an_unanswered_exercise_shows_no_empty_expectation():
    from autograder.lessons import lesson03

    def dropout_by_hand(x, p, u, training):
        raise NotImplementedError()

    with pytest.raises(CheckFailed) as failure:
        lesson03.check_dropout_by_hand(dropout_by_hand)
    assert "—" not in failure.value.feedback("zh").split("\n", 1)[1]
    assert "期望" not in failure.value.feedback("zh") and "expected" not in str(failure.value)


def test_a_test_cell_run_before_its_exercise_says_which_cell_to_run():
    from nbclient import NotebookClient

    lesson = "03_eval_vs_no_grad"
    cells = graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('import autograder\nDEVICE = autograder.setup("zh")'),
        nbformat.v4.new_code_cell(cells["ex1_dropout_by_hand_tests"].source),
        nbformat.v4.new_code_cell("undefined_name_of_the_learner"),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    said = "\n".join(nb.cells[1].outputs[0].get("traceback", []))
    assert "`dropout_by_hand` 还没有定义" in said and "练习 1" in said, said
    assert "Traceback" not in said and "NameError" not in said
    other = "\n".join(nb.cells[2].outputs[0].get("traceback", []))
    assert "NameError" in other  # any other undefined name keeps IPython's traceback
