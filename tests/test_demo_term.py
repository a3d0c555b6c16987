"""scripts/demo_term.py builds a term as nbgrader's collect would leave it, from the catalogue.

A tiny term (6 learners x 2 lessons, not graded: grading is what the script measures, and
test_export grades a class) must put every submission in COURSE/submitted/<learner>/<lesson>/
with timestamp.txt (after the due date exactly when late), register every learner with a name
and every lesson's due date in the gradebook, and fill each exercise with an answer of the
lesson's catalogue (or the solution, or the released stub where it was left blank).
"""

from __future__ import annotations

import importlib
import importlib.util
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest

from autograder import course
from autograder.grader import demo

pytestmark = pytest.mark.notebooks
REPO = Path(__file__).resolve().parents[1]
LEARNERS = 6
SEED = 3


def _script():
    spec = importlib.util.spec_from_file_location("demo_term", REPO / "scripts" / "demo_term.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["demo_term"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    script = _script()
    base = tmp_path_factory.mktemp("term")
    lessons = script.lesson_names(["01", "02"])
    handed_in = script.build(base, LEARNERS, lessons, SEED)
    return script, base, lessons, handed_in


def _when(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f UTC").replace(tzinfo=UTC)


def test_every_submission_lies_where_collect_puts_it(term):
    _, base, lessons, handed_in = term
    assert {(h.student, h.lesson) for h in handed_in} == {
        (f"learner{k:03d}", lesson) for k in range(1, LEARNERS + 1) for lesson in lessons
    }
    for handed in handed_in:
        folder = base / handed.course / "submitted" / handed.student / handed.lesson
        if handed.kind == "not submitted":
            assert not folder.exists(), folder
            continue
        assert sorted(p.name for p in folder.iterdir()) == [
            f"{handed.lesson}.ipynb",
            "timestamp.txt",
        ]
        assert (folder / "timestamp.txt").read_text(encoding="utf-8") == handed.timestamp
        for other in {"en", "zh"} - {handed.course}:  # handed in once, in one course
            assert not (base / other / "submitted" / handed.student / handed.lesson).exists()


def test_learners_and_due_dates_are_in_the_gradebook(term):
    from nbgrader.api import Gradebook

    script, base, lessons, handed_in = term
    people = script.roster(LEARNERS, random.Random(SEED))  # the build's first draws
    for lang in ("en", "zh"):
        with Gradebook(course.gradebook_url(base / lang)) as gradebook:
            names = {s.id: (s.first_name, s.last_name) for s in gradebook.students}
            due = {a.name: a.duedate for a in gradebook.assignments}
        assert names == {
            p.student: (p.first_name, p.last_name) for p in people if lang in p.courses
        }
        assert all(first and last for first, last in names.values())
        assert sorted(due) == lessons  # the term's lessons only
        for index, lesson in enumerate(lessons):
            assert due[lesson] == datetime(2026, 9, 14, 12) + timedelta(weeks=index)
            for handed in handed_in:
                if handed.course == lang and handed.lesson == lesson and handed.timestamp:
                    after = _when(handed.timestamp).replace(tzinfo=None) > due[lesson]
                    assert after == handed.late, handed


def _catalogued(base: Path, lang: str, lesson: str) -> tuple[dict, dict]:
    """Right and wrong code by grade_id, read from the catalogue and the course's source."""
    demo._catalog_package()
    catalogue = importlib.import_module(f"catalog.lesson{lesson[:2]}")
    source = nbformat.read(str(base / lang / "source" / lesson / f"{lesson}.ipynb"), 4)
    solved = {gid: c.source for gid, c in demo._cells(source).items() if c.cell_type == "code"}
    right = {gid: {solved[gid], *(a.code for a in found)} for gid, found in catalogue.RIGHT.items()}
    wrong = {gid: {a.code for a in found} for gid, found in catalogue.WRONG.items()}
    return right, wrong


def test_answers_come_from_the_catalogue(term):
    script, base, lessons, handed_in = term
    verdicts = set()
    for lang in ("en", "zh"):
        for lesson in lessons:
            right, wrong = _catalogued(base, lang, lesson)
            release = nbformat.read(str(base / lang / "release" / lesson / f"{lesson}.ipynb"), 4)
            stubs = {gid: cell.source for gid, cell in demo._cells(release).items()}
            for handed in handed_in:
                if handed.course != lang or handed.lesson != lesson or not handed.timestamp:
                    continue
                path = base / lang / "submitted" / handed.student / lesson / f"{lesson}.ipynb"
                cells = demo._cells(nbformat.read(str(path), 4))
                assert set(cells) == set(stubs)  # no cell added or lost
                for gid in right:
                    verdict = handed.answers.get(gid, "blank").partition(":")[0]
                    verdicts.add(verdict)
                    allowed = {"right": right, "wrong": wrong}.get(verdict, {gid: {stubs[gid]}})
                    assert cells[gid].source in allowed[gid], (handed.student, gid, verdict)
                written = [g for g, c in demo._cells(release).items() if c.cell_type == "markdown"]
                for gid in written:
                    if stubs[gid] != cells[gid].source:
                        assert handed.answers.get(gid) == "written", (handed.student, gid)
    assert {"right", "wrong"} <= verdicts  # learners differ


def test_the_same_seed_gives_the_same_term(term):
    script, _, _, _ = term
    first, again = (script.roster(50, random.Random(SEED)) for _ in range(2))
    assert first == again
    assert {p.level for p in first} == {"strong", "middling", "struggling"}
    assert any(len(p.courses) == 2 for p in first)


def test_each_measurement_is_of_its_own_command():
    script = _script()
    big = script.measure("big", sys.executable, "-c", "held = b'x' * 300 * 1024**2; print('ok')")
    small = script.measure("small", sys.executable, "-c", "pass")
    assert (big.returncode, big.output.strip(), small.returncode) == (0, "ok", 0)
    assert 300 <= big.peak_mib < 700
    assert small.peak_mib < 100  # not the larger command run before it


def test_points_are_compared_with_the_catalogue():
    script = _script()
    handed = [
        script.Handed(
            "en", "01_x", "ann", "submitted", answers={"ex1": "right:a", "ex2": "wrong:b"}
        ),
        script.Handed("zh", "01_x", "bo", "submitted", answers={"ex1": "right:a", "ex2": "blank"}),
        script.Handed("en", "01_x", "cy", "submitted", answers={"ex1": "right:a"}),
    ]
    rows = [
        {"student": "ann", "01_x:status": "graded", "01_x:ex1_tests": "2", "01_x:ex2_tests": "0"},
        {"student": "bo", "01_x:status": "graded", "01_x:ex1_tests": "0", "01_x:ex2_tests": "3"},
        {"student": "cy", "01_x:status": "flagged", "01_x:ex1_tests": "0"},  # not compared
    ]
    found = script.disagreements(rows, handed)
    assert [line.split(":")[0] for line in found] == ["zh bo 01_x ex1", "zh bo 01_x ex2"]
