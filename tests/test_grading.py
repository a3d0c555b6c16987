"""Lesson notebooks graded end to end by nbgrader's autograde (through ``course-grade``).

One course per language is made from solutions/ and graded once. The English course
gets, in every lesson, the filled-in solution and the untouched learner notebook; the
Chinese course the untouched Chinese notebook of every lesson. Notebooks meet a course
of the other language in the first lesson and the capstone: there they must score the
same in both (a solution, and one catalogued wrong answer for every exercise), and the
verdicts are in the course's language. Every catalogued answer is graded through
``course-grade`` in test_catalogue_graded.py; plain ``nbgrader`` commands on a course
are tested in test_course_grade.py.
"""

from __future__ import annotations

import importlib
import subprocess

import pytest
from conftest import NOTEBOOKS, SOLUTIONS
from lesson_cells import FIGURE_CALLS, graded_cells
from nbgrader_course import autograded_outputs, autograded_path, scores, submission, submit
from processes import BIN, venv_env

from autograder import bilingual, course
from autograder.common.protocol import NOT_ATTEMPTED
from autograder.grader.pipeline import records
from autograder.kernel.selfcheck import NOT_REPEATED
from autograder.starter import starter_source

pytestmark = pytest.mark.notebooks

LESSONS = [source.parent.name for source in course.lesson_sources(SOLUTIONS)]


def _catalogue(lesson: str) -> dict[str, list]:
    number = lesson.split("_", 1)[0]
    return importlib.import_module(f"catalog.lesson{number}").WRONG


def _solutions(lesson: str) -> dict[str, str]:
    cells = graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb")
    return {
        gid: cell.source
        for gid, cell in cells.items()
        if cell.metadata["nbgrader"].get("solution") and cell.cell_type == "code"
    }


def _everywhere(entries: list) -> list:
    """The wrong answers that are wrong on every device (grading may run on a GPU)."""
    return [w for w in entries if {"cpu", "cuda"} <= set(w.devices)]


def _graded_wrong(entries: list):
    """The wrong answer of an exercise graded in both course languages: its first one with a
    misconception ID (test_catalogue_graded grades every one in the English course)."""
    named = [w for w in _everywhere(entries) if w.misconception]
    return (named or _everywhere(entries))[0]


def _wrong_answers(lesson: str) -> dict[str, str]:
    """Every exercise answered by its graded wrong answer."""
    wrong = _catalogue(lesson)
    return {grade_id: _graded_wrong(entries).code for grade_id, entries in wrong.items()}


def _starts_from_code(lesson: str) -> bool:
    """Whether the learner starts from starter code (the capstone) instead of nbgrader's stub."""
    cells = graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb").values()
    return any(starter_source(cell, "en") is not None for cell in cells)


# Where a notebook meets a course of the other language: the first lesson and the capstone
# (nbgrader's stubs, and starter code). The graded cells are the same in both languages
# (test_notebooks), so the other lessons add nothing there but minutes: in the Chinese
# course they are graded untouched, which runs every Chinese notebook to its self-check.
ACROSS_LANGUAGES = (LESSONS[0], *[lesson for lesson in LESSONS if _starts_from_code(lesson)])


def _students(lesson: str) -> dict[str, list[str]]:
    """Who submits the lesson, per course language: name_<language of the notebook>."""
    across = lesson in ACROSS_LANGUAGES
    return {
        "en": ["solution_en", "blank_en", *(["solution_zh", "wrong_en"] if across else [])],
        "zh": ["blank_zh", *(["solution_en", "wrong_en"] if across else [])],
    }


def _submit_class(root, lang: str) -> None:
    """Every student's submission of every lesson (see ``_students``) into the course."""
    for lesson in LESSONS:
        learner = {code: NOTEBOOKS / code / f"{lesson}.ipynb" for code in ("en", "zh")}
        solutions = _solutions(lesson)
        answers = {
            "solution": solutions,
            "blank": {},
            "wrong": {**solutions, **_wrong_answers(lesson)},
        }
        for student in _students(lesson)[lang]:
            kind, nb_lang = student.rsplit("_", 1)
            submit(root, student, lesson, submission(learner[nb_lang], answers[kind]))


@pytest.fixture(scope="module")
def graded(tmp_path_factory, make_course):
    """Grade every lesson in an English and a Chinese course; return their roots.

    Each course is graded in one ``course-grade grade`` run over all its lessons,
    as an instructor grading a term would, so its workers start once.
    """
    roots = {}
    for lang in ("en", "zh"):
        root = make_course(tmp_path_factory.mktemp(f"course-{lang}") / "course", lang)
        _submit_class(root, lang)
        result = subprocess.run(
            [str(BIN / "course-grade"), "grade", str(root), *LESSONS, "--workers", "2"],
            env=venv_env(),
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        for lesson in LESSONS:
            graded_records = records.load(root, lesson)
            assert {r.student for r in graded_records} == set(_students(lesson)[lang]), lesson
            for record in graded_records:
                assert record.status in ("graded", "flagged"), (lesson, record)
        roots[lang] = root
    return roots


def _auto_cells(lesson: str) -> dict[str, float]:
    cells = graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb")
    return {
        gid: cell.metadata["nbgrader"]["points"]
        for gid, cell in cells.items()
        if cell.metadata["nbgrader"].get("grade") and cell.cell_type == "code"
    }


@pytest.mark.parametrize(
    ("lesson", "lang", "student"),
    [
        *((lesson, "en", "solution_en") for lesson in LESSONS),
        *(
            (lesson, lang, student)
            for lesson in ACROSS_LANGUAGES
            for lang, student in (("zh", "solution_en"), ("en", "solution_zh"))
        ),
    ],
)
def test_solution_earns_full_marks(graded, lesson, lang, student):
    got = scores(graded[lang], lesson, student)
    for grade_id, points in _auto_cells(lesson).items():
        assert got[grade_id] == (points, points), grade_id


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize(("lang", "student"), [("en", "blank_en"), ("zh", "blank_zh")])
def test_learner_notebook_runs_and_earns_nothing(graded, lesson, lang, student):
    got = scores(graded[lang], lesson, student)
    auto = _auto_cells(lesson)
    assert all(got[grade_id][0] == 0 for grade_id in auto)
    outputs = autograded_outputs(graded[lang], lesson, student)
    self_check = [text for text in outputs.values() if "Self-check" in text or "自测" in text]
    # the kernel ran to the end, and its self-check pointed to the graded test cells instead
    # of running every check again (autograder/kernel/selfcheck.py)
    assert len(self_check) == 1 and NOT_REPEATED(lang) in self_check[0], self_check
    if _starts_from_code(lesson):
        # the capstone's learner version is the broken script: every part runs and fails
        for grade_id in auto:
            assert "✗" in outputs[grade_id] and NOT_ATTEMPTED(lang) not in outputs[grade_id]
    else:
        for grade_id in auto:
            assert NOT_ATTEMPTED(lang) in outputs[grade_id], outputs[grade_id][:300]


@pytest.mark.parametrize("lesson", LESSONS)
@pytest.mark.parametrize(("lang", "student"), [("en", "blank_en"), ("zh", "blank_zh")])
def test_run_all_in_jupyterlab_goes_to_the_end(graded, lesson, lang, student):
    """A learner's Run All of the untouched notebook, read off its graded run: every code
    cell ran, every figure is an image, and every cell that raised carries the tag that
    keeps JupyterLab's Run All going (test_browser presses Run All in a few lessons)."""
    learner = bilingual.read(NOTEBOOKS / lang / f"{lesson}.ipynb")
    tags = {cell.id: cell.metadata.get("tags", []) for cell in learner.cells}
    graded_nb = bilingual.read(autograded_path(graded[lang], lesson, student))
    ran = [c for c in graded_nb.cells if c.cell_type == "code"]
    assert [c.id for c in ran] == [c.id for c in learner.cells if c.cell_type == "code"]
    for cell in ran:
        if not cell.source.strip():
            continue
        assert cell.execution_count is not None, (cell.id, cell.source[:80])
        if any(o.output_type == "error" for o in cell.outputs):
            assert course.RUN_ALL_CONTINUES_TAG in tags[cell.id], (cell.id, cell.source[:80])
        if any(call in cell.source for call in FIGURE_CALLS):
            images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
            assert images, (cell.id, "a figure cell shows no image")


@pytest.mark.parametrize("student", ["solution_en", "wrong_en"])
@pytest.mark.parametrize("lesson", ACROSS_LANGUAGES)
def test_submission_scores_the_same_against_either_course_language(graded, lesson, student):
    assert scores(graded["en"], lesson, student) == scores(graded["zh"], lesson, student)


@pytest.mark.parametrize("lesson", ACROSS_LANGUAGES)
def test_feedback_is_in_the_course_language_whatever_the_notebook_chose(graded, lesson):
    """An English notebook (it calls ``autograder.setup("en")``) graded in the Chinese course:
    the verdicts the grader writes into it are Chinese."""
    outputs = autograded_outputs(graded["zh"], lesson, "wrong_en")
    named = {
        gid: _graded_wrong(entries).misconception for gid, entries in _catalogue(lesson).items()
    }
    assert any(named.values()), lesson
    for grade_id, misconception in named.items():
        text = outputs[f"{grade_id}_tests"]
        if misconception:
            assert f"常见误区 {misconception}" in text, (grade_id, text[:400])
            assert f"misconception {misconception}" not in text, (grade_id, text[:400])


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_record_says_where_its_time_went(graded, lesson):
    """The stage table the benchmark sums (autograder/grader/pipeline/stages.py): the learner's run,
    the judge and nbgrader's own steps each took time, and the stages fit in the whole."""
    for record in records.load(graded["en"], lesson):
        assert {"staging", "reading", "learner run", "judge", "nbgrader"} <= set(record.stages)
        assert record.stages["learner run"] > 0 and record.stages["nbgrader"] > 0, record
        assert 0 < sum(record.stages.values()) <= record.seconds + 0.05, record
