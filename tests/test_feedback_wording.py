"""Feedback a learner reads is clean in both languages (issue 22, item 6).

Every catalogued wrong answer's feedback, in Chinese: what was expected and found, its
misconception named where it has one, each misconception ID once, floats rounded, no
untranslated descriptions of values, no English word the course wrote (issue 36: code
names, PyTorch's own messages and the names the glossary keeps in English may stay), the
lesson named where it says what to re-read. An unanswered exercise does
not show an empty "expected", and a test cell run before its exercise's cell says which
cell to run.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import re

import nbformat
import pytest
from conftest import REPO, SOLUTIONS
from language_lint import english_words, identifiers
from lesson_cells import graded_cells

from autograder import bilingual, course
from autograder.common.misconceptions import lookup
from autograder.common.result import CheckFailed

LESSONS = [source.parent.name for source in course.lesson_sources(SOLUTIONS)]
NUMBER = re.compile(r"\d+\.\d+")


def _unrounded(text: str) -> list[str]:
    """Numbers with more significant digits than feedback shows (6; 0.30000001192092896 has 17)."""
    return [n for n in NUMBER.findall(text) if len(n.replace(".", "").lstrip("0")) > 8]


# How an observed value used to be described, in English whatever the language.
ENGLISH_DESCRIPTIONS = re.compile(r"\b(list|tuple) of \d+ items\b|\b(bool|int|float|str): ")


# English that Chinese feedback may show besides code names: Python's names of types and
# devices and numbers as Python prints them, PyTorch's class names, and the words the
# glossary keeps in English.
KEPT_IN_ENGLISH = {
    *("tensor", "float", "int", "bool", "str", "list", "tuple", "dict", "function", "generator"),
    *("cpu", "cuda", "mps", "MPS", "xpu", "XPU", "Intel", "nan", "inf", "RemovableHandle"),
    *("dtype", "logit", "logits", "autocast", "GAN", "Python", "Apple", "volatile"),
}
QUOTED = re.compile(r"“[^”]*”")  # a message quoted as PyTorch (or the learner's code) raised it
RAISED = re.compile(r"\b\w+(?:Error|Warning|Exception): .*")  # one shown as Python prints it
EXCEPTION = re.compile(r"\w+(?:Error|Warning|Exception)")
INLINE_CODE = re.compile(r"`([^`]+)`")


@functools.cache
def _code_names(lesson: str) -> frozenset[str]:
    """Names the lesson uses as code: in its code cells, its prose's inline code, and the
    classes its checks define (the Functions an exercise is tested on)."""
    names = set()
    for cell in bilingual.read(SOLUTIONS / lesson / f"{lesson}.ipynb").cells:
        if cell.cell_type == "code":
            with contextlib.suppress(SyntaxError):
                names |= identifiers([cell.source])
        else:
            for span in INLINE_CODE.findall(cell.source):
                names |= set(re.findall(r"\w+", span))
    checks = REPO / "autograder" / "lessons" / f"lesson{lesson[:2]}.py"
    tree = ast.parse(checks.read_text(encoding="utf-8"))
    names |= {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    return frozenset(names)


def _course_english(feedback: str, lesson: str, code: str) -> list[str]:
    """English words in Chinese feedback that the course wrote (not code, not PyTorch's)."""
    known = _code_names(lesson) | KEPT_IN_ENGLISH
    with contextlib.suppress(SyntaxError):
        known |= identifiers([code])
    text = RAISED.sub(" ", QUOTED.sub(" ", feedback))
    words = english_words(text, known, quoted_is_code=True)
    return [w for w in words if not EXCEPTION.fullmatch(w)]


def _wrong_answers():
    for lesson in LESSONS:
        catalogue = importlib.import_module(f"catalog.lesson{lesson[:2]}")
        for grade_id, answers in catalogue.WRONG.items():
            for wrong in answers:
                if "cpu" in wrong.devices:
                    yield pytest.param(lesson, grade_id, wrong, id=f"{grade_id}-{wrong.name}")


@pytest.mark.parametrize(("lesson", "grade_id", "wrong"), list(_wrong_answers()))
def test_chinese_feedback_is_clean(lesson, grade_id, wrong, self_study, monkeypatch):
    """The Chinese feedback of the answer's self-study failure (judged once per test run,
    tests/self_study.py, the same failure test_lesson_checks reads in English)."""
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    cells = graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb")
    judged = self_study.judge(wrong.code, cells[f"{grade_id}_tests"].source)
    assert judged.error() is None and not judged.passed, judged
    feedback, ids = judged.feedback_zh, list(judged.misconceptions)
    assert "期望" in feedback and "实际" in feedback, feedback
    if wrong.misconception:  # named in Chinese, with the section to re-read
        assert wrong.misconception in ids and "常见误区" in feedback, feedback
    assert len(ids) == len(set(ids)), ids
    assert not _unrounded(feedback), feedback
    assert not ENGLISH_DESCRIPTIONS.findall(feedback), feedback
    assert not _course_english(feedback, lesson, wrong.code), feedback
    assert "—" not in feedback.replace("——", ""), feedback  # one dash in Chinese: ——
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
    NotebookClient(
        nb, timeout=120, kernel_name="python3", allow_errors=True, shutdown_kernel="immediate"
    ).execute()
    said = "\n".join(nb.cells[1].outputs[0].get("traceback", []))
    assert "`dropout_by_hand` 还没有定义" in said and "练习 1" in said, said
    assert "Traceback" not in said and "NameError" not in said
    other = "\n".join(nb.cells[2].outputs[0].get("traceback", []))
    assert "NameError" in other  # any other undefined name keeps IPython's traceback
