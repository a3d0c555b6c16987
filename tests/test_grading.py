"""Lesson notebooks graded end to end by real ``nbgrader autograde`` in temporary courses.

One course per language is made from solutions/ and graded once with several
students: the filled-in solution in both languages, the untouched learner
notebooks, and submissions built from the catalogued wrong answers.
"""

from __future__ import annotations

import importlib

import pytest
from conftest import NOTEBOOKS, SOLUTIONS
from lesson_cells import graded_cells
from nbgrader_course import autograde, autograded_outputs, scores, submission, submit

from autograder import course

pytestmark = pytest.mark.notebooks

LESSONS = [source.parent.name for source in course.lesson_sources(SOLUTIONS)]


def _catalogue(lesson: str) -> dict[str, dict[str, str]]:
    """grade_id -> {misconception ID, or "none": code}: the first wrong answer of each ID."""
    number = lesson.split("_", 1)[0]
    wrong = importlib.import_module(f"catalog.lesson{number}").WRONG
    first: dict[str, dict[str, str]] = {}
    for grade_id, answers in wrong.items():
        for answer in answers:
            first.setdefault(grade_id, {}).setdefault(answer.misconception or "none", answer.code)
    return first


def _solutions(lesson: str) -> dict[str, str]:
    cells = graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb")
    return {
        gid: cell.source
        for gid, cell in cells.items()
        if cell.metadata["nbgrader"].get("solution") and cell.cell_type == "code"
    }


def _wrong_submissions(lesson: str) -> dict[str, dict[str, str]]:
    """Student name -> answers: the k-th wrong answer of every exercise, solutions elsewhere."""
    wrong = _catalogue(lesson)
    rounds = max(len(by_id) for by_id in wrong.values())
    students = {}
    for k in range(rounds):
        answers = dict(_solutions(lesson))
        for grade_id, by_id in wrong.items():
            ids = list(by_id)
            answers[grade_id] = by_id[ids[min(k, len(ids) - 1)]]
        students[f"wrong{k}_en"] = answers
    return students


ROUNDS = max(len(by_id) for lesson in LESSONS for by_id in _catalogue(lesson).values())
STUDENTS = {
    "en": ["solution_en", "solution_zh", "blank_en", *(f"wrong{k}_en" for k in range(ROUNDS))],
    "zh": ["solution_en", "blank_zh", "wrong0_en"],
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade every lesson in an English and a Chinese course; return their roots."""
    roots = {}
    for lang, students in STUDENTS.items():
        root = tmp_path_factory.mktemp(f"course-{lang}")
        course.create(root, lang, SOLUTIONS)
        for lesson in LESSONS:
            learner = {code: NOTEBOOKS / code / f"{lesson}.ipynb" for code in ("en", "zh")}
            answers = {
                "solution": _solutions(lesson),
                "blank": {},
                **{name.rsplit("_", 1)[0]: a for name, a in _wrong_submissions(lesson).items()},
            }
            for student in students:
                kind, nb_lang = student.rsplit("_", 1)
                if kind in answers:
                    submit(root, student, lesson, submission(learner[nb_lang], answers[kind]))
            result = autograde(root, lesson)
            assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        roots[lang] = root
    return roots


def _auto_cells(lesson: str) -> dict[str, float]:
    cells = graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb")
    return {
        gid: cell.metadata["nbgrader"]["points"]
        for gid, cell in cells.items()
        if cell.metadata["nbgrader"].get("grade") and cell.cell_type == "code"
    }


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize(
    ("lang", "student"), [("en", "solution_en"), ("en", "solution_zh"), ("zh", "solution_en")]
)
def test_solution_earns_full_marks(graded, lesson, lang, student):
    got = scores(graded[lang], lesson, student)
    for grade_id, points in _auto_cells(lesson).items():
        assert got[grade_id] == (points, points), grade_id


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize(("lang", "student"), [("en", "blank_en"), ("zh", "blank_zh")])
def test_learner_notebook_runs_and_earns_nothing(graded, lesson, lang, student):
    got = scores(graded[lang], lesson, student)
    assert all(got[grade_id][0] == 0 for grade_id in _auto_cells(lesson))
    outputs = autograded_outputs(graded[lang], lesson, student)
    self_check = [text for text in outputs.values() if "Self-check" in text or "自测" in text]
    assert self_check, "the self-check cell produced no output: did the kernel die?"
    assert "not attempted" in self_check[0] or "尚未作答" in self_check[0]


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_wrong_answer_loses_its_points_and_is_named(graded, lesson):
    wrong = _catalogue(lesson)
    for k, student in enumerate(_wrong_submissions(lesson)):
        got = scores(graded["en"], lesson, student)
        outputs = autograded_outputs(graded["en"], lesson, student)
        for grade_id, by_id in wrong.items():
            ids = list(by_id)
            misconception = ids[min(k, len(ids) - 1)]
            assert got[f"{grade_id}_tests"][0] == 0, (grade_id, misconception)
            if misconception != "none":
                assert misconception in outputs[f"{grade_id}_tests"], (grade_id, misconception)


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize("student", ["solution_en", "wrong0_en"])
def test_submission_scores_the_same_against_either_course_language(graded, lesson, student):
    assert scores(graded["en"], lesson, student) == scores(graded["zh"], lesson, student)
