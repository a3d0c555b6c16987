"""`course-grade export` on a small graded class: the CSVs against the gradebook and the formats.

Four learners of the English course hand in lesson 01, graded by `course-grade grade` with a
due date set by `nbgrader db assignment add`: on time and hand graded afterwards (alice), late
with a catalogued wrong answer (bob), flagged (carol), and one nbgrader cannot grade (dave).
A learner of the Chinese course (erin) submitted nothing of her own; a submission in her
name, and one in bob's, were refused at collect. The export must agree with nbgrader's
gradebook, the term must hold every learner once, and the LMS files must follow Canvas's and
Moodle's import formats.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbgrader_course import submission, submit
from processes import BIN, venv_env
from test_course_grade import course_grade

from autograder import course
from autograder.grader import demo
from autograder.grader.pipeline import late
from autograder.grader.reports import gradebook_rows, lms

pytestmark = pytest.mark.notebooks
LESSON = "01_requires_grad"
DUE = "2026-01-10 12:00:00 UTC"
ON_TIME = "2026-01-10 11:00:00.000000 UTC"
LATER = "2026-01-10 11:30:00.000000 UTC"  # a newer submission, on time too
LATE = "2026-01-12 00:00:00.000000 UTC"  # 36 hours late: two days begun
LEARNERS = ("alice", "bob", "carol", "dave")
HAND_GRADE = 1.5  # alice's written answer, as the formgrader would store it
CANVAS_PERSON = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def nbgrader(root: Path, *args: str) -> None:
    """An nbgrader command in the course folder, as the instructor types it."""
    done = subprocess.run(
        [str(BIN / "nbgrader"), *args],
        cwd=root,
        env=venv_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _wrong_answer() -> tuple[str, str, str]:
    """A catalogued wrong answer with its misconception ID: (grade_id, ID, code)."""
    for grade_id, by_id in demo._catalogue(LESSON).items():
        for misconception, code in by_id.items():
            if misconception != "no-id":
                return grade_id, misconception, code
    raise AssertionError("lesson 01's catalogue names no misconception")


def _refuse(root: Path, claimed: str, owner: str) -> None:
    """The list collect writes of the submissions it refused (classroom/owned.py)."""
    folder = root / "grading" / "refused"
    folder.mkdir(parents=True, exist_ok=True)
    item = {
        "username": claimed,
        "owner": owner,
        "timestamp": "2026-01-10 10:00:00+00:00",
        "filename": f"{claimed}+{LESSON}+2026-01-10 10:00:00.000000 UTC",
    }
    (folder / f"{LESSON}.json").write_text(json.dumps([item], indent=1), encoding="utf-8")


def _answers(root: Path) -> dict[str, str]:
    """Right answers to every code exercise of the lesson, and a written answer."""
    source = nbformat.read(str(root / "source" / LESSON / f"{LESSON}.ipynb"), as_version=4)
    solutions = {
        gid: cell.source
        for gid, cell in demo._cells(source).items()
        if cell.metadata["nbgrader"].get("solution") and cell.cell_type == "code"
    }
    solutions["written_rg2"] = "Only leaves the optimizer updates need requires_grad."
    return solutions


def _hand_grade(root: Path, student: str, grade_id: str, points: float | None) -> None:
    """A hand grade as the formgrader's grade handler stores it (nbgrader's GradeHandler)."""
    from nbgrader.api import Gradebook

    with Gradebook(course.gradebook_url(root)) as gradebook:
        grade = gradebook.find_grade(grade_id, LESSON, LESSON, student)
        grade.manual_score = points
        grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
        gradebook.db.commit()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, make_course):
    base = tmp_path_factory.mktemp("term")
    en, zh = make_course(base / "en"), make_course(base / "zh", "zh")
    nbgrader(en, "db", "assignment", "add", LESSON, f"--duedate={DUE}")
    names = ("--first-name=Alice", "--last-name=Liddell", "--email=alice@example.org")
    nbgrader(en, "db", "student", "add", "alice", *names, "--lms-user-id=1001")
    nbgrader(zh, "db", "student", "add", "erin", "--first-name=恩", "--last-name=李")
    learner = en / "release" / LESSON / f"{LESSON}.ipynb"
    solutions = _answers(en)
    wrong_id, misconception, wrong = _wrong_answer()
    solved = submission(learner, solutions)
    forged = demo._insert_after_setup(solved, "print('a test cell of my own')")
    forged.cells[
        next(i for i, c in enumerate(forged.cells) if c.get("id") == "demo-inserted")
    ].metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "points": 5,
        "grade_id": "mine",
        "schema_version": 3,
    }
    handed = {
        "alice": (solved, ON_TIME),
        "bob": (submission(learner, {**solutions, wrong_id: wrong}), LATE),
        "carol": (
            demo._insert_after_setup(solved, "torch.allclose = lambda *a, **k: True"),
            ON_TIME,
        ),
        "dave": (forged, None),
    }
    for student, (nb, when) in handed.items():
        path = submit(en, student, LESSON, nb)
        if when:
            (path.parent / "timestamp.txt").write_text(when, encoding="utf-8")
    result = course_grade("grade", str(en), LESSON, "--cell-timeout", "60", "--workers", "2")
    assert result.returncode == 1, result.stderr[-3000:]  # dave's ends in error, named
    assert "error: dave/" in result.stderr, result.stderr[-3000:]
    _hand_grade(en, "alice", "written_rg2", HAND_GRADE)
    _refuse(en, "bob", "mallory")
    _refuse(zh, "erin", "mallory")
    lesson = course_grade("export", str(en), LESSON)
    assert lesson.returncode == 0, lesson.stderr
    term = course_grade("export", str(en), "--term", "--with-course", str(zh))
    assert term.returncode == 0, term.stderr
    return en, zh, (wrong_id, misconception)


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _number(text: str) -> str:
    return f"{float(text):g}"


def test_the_lesson_export_agrees_with_the_gradebook(graded):
    from nbgrader.api import Gradebook

    en, _, _ = graded
    rows = _csv(en / "grading" / f"{LESSON}.csv")
    own = {r["student"]: r for r in rows if r["status"] != "refused"}
    assert set(own) == set(LEARNERS)
    with Gradebook(course.gradebook_url(en)) as gradebook:
        for student in ("alice", "bob", "carol"):
            row = own[student]
            handed_in = gradebook.find_submission(LESSON, student)
            notebook = gradebook.find_submission_notebook(LESSON, LESSON, student)
            penalty = notebook.late_submission_penalty or 0.0
            assert _number(row["score"]) == f"{notebook.score:g}", student
            assert _number(row["late_penalty"]) == f"{penalty:g}", student
            assert _number(row["total"]) == f"{notebook.score - penalty:g}", student
            assert _number(row["max_score"]) == f"{notebook.max_score:g}"
            for grade in notebook.grades:
                want = "pending" if grade.needs_manual_grade else f"{grade.score:g}"
                assert row[grade.name] == want, (student, grade.name)
            assert row["timestamp"] == f"{handed_in.timestamp.isoformat(sep=' ')} UTC"
            late_s = handed_in.total_seconds_late
            assert row["seconds_late"] == (f"{late_s:g}" if late_s else ""), student


def test_lateness_status_misconceptions_and_hand_grading_are_in_the_export(graded):
    en, _, (wrong_id, misconception) = graded
    rows = _csv(en / "grading" / f"{LESSON}.csv")
    own = {r["student"]: r for r in rows if r["status"] != "refused"}
    alice, bob, carol, dave = (own[s] for s in LEARNERS)
    assert (alice["status"], alice["seconds_late"], alice["late_penalty"]) == ("graded", "", "0")
    assert alice["written_rg2"] == f"{HAND_GRADE:g}" and alice["hand_grading"] == "done"
    assert alice["first_name"] == "Alice" and alice["email"] == "alice@example.org"
    # bob: 36 h late, two days begun, 10 % each (the course's default policy)
    assert float(bob["seconds_late"]) == 36 * 3600
    assert (
        float(bob["late_penalty"]) == pytest.approx(0.2 * float(bob["score"]))
        and float(bob["late_penalty"]) > 0
    )
    assert bob[f"{wrong_id}_tests"] == "0" and misconception in bob["misconceptions"].split()
    assert bob["written_rg2"] == "pending" and bob["hand_grading"] == "pending: 2 points"
    assert carol["status"] == "flagged" and "forbidden construct" in carol["flags"]
    assert dave["status"] == "error" and dave["reason"].startswith("nbgrader could not grade it")
    assert dave["total"] == dave["score"] == dave["hand_grading"] == ""  # no score stands
    assert dave["timestamp"] == ""  # no timestamp.txt: nothing says when
    (refused,) = [r for r in rows if r["status"] == "refused"]
    assert refused["student"] == "bob" and "mallory made it" in refused["reason"]
    assert refused["total"] == ""


def test_the_term_holds_every_learner_of_both_courses_once(graded):
    en, _, _ = graded
    rows = _csv(en / "grading" / "term.csv")
    students = [r["student"] for r in rows]
    assert sorted(students) == sorted([*LEARNERS, "erin"])
    by = {r["student"]: r for r in rows}
    lesson = _csv(en / "grading" / f"{LESSON}.csv")
    own = {r["student"]: r for r in lesson if r["status"] != "refused"}
    for student in LEARNERS:
        assert by[student]["course"] == "en"
        for key in ("total", "status", "misconceptions", "seconds_late", "hand_grading"):
            assert by[student][f"{LESSON}:{key}"] == own[student][key], (student, key)
        assert by[student]["term_total"] == (own[student]["total"] or "0")
    assert "mallory made it" in by["bob"][f"{LESSON}:reason"]  # his own submission stands
    assert by["bob"][f"{LESSON}:status"] == "graded"
    erin = by["erin"]
    assert (erin["course"], erin["first_name"], erin["last_name"]) == ("zh", "恩", "李")
    assert erin[f"{LESSON}:status"] == "refused" and erin[f"{LESSON}:total"] == ""
    lessons = sorted(p.name for p in (en / "source").iterdir())
    assert [h for h in rows[0] if h.endswith(":status")] == [f"{x}:status" for x in lessons]


def test_the_canvas_file_follows_canvas_import_format(graded):
    en, _, _ = graded
    with (en / "grading" / "term-canvas.csv").open(encoding="utf-8", newline="") as handle:
        header, possible, *rows = list(csv.reader(handle))
    lessons = sorted(p.name for p in (en / "source").iterdir())
    assert header == [*CANVAS_PERSON, *lessons]  # no Canvas ids given: names alone
    assert possible[0] == "    Points Possible" and all(float(x) > 0 for x in possible[5:])
    by = {row[3]: row for row in rows}  # SIS Login ID: the learner's login
    assert sorted(by) == sorted([*LEARNERS, "erin"]) and len(rows) == len(by)
    assert by["alice"][:5] == ["Liddell, Alice", "1001", "", "alice", ""]
    term = {r["student"]: r for r in _csv(en / "grading" / "term.csv")}
    column = header.index(LESSON)
    assert float(by["alice"][column]) == float(term["alice"][f"{LESSON}:total"])
    for student in ("bob", "carol", "dave", "erin"):  # pending, pending, error, nothing
        assert by[student][column] == "", student
    for row in rows:
        assert len(row) == len(header)
        for cell in row[5:]:
            assert cell == "" or float(cell) >= 0
    lesson_file = _csv(en / "grading" / f"{LESSON}-canvas.csv")
    assert list(lesson_file[0]) == [*CANVAS_PERSON, LESSON]
    assert float(lesson_file[0][LESSON]) == 16  # its Points Possible row


def test_the_moodle_file_follows_moodle_import_format(graded):
    en, _, _ = graded
    with (en / "grading" / "term-moodle.csv").open(encoding="utf-8", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    lessons = sorted(p.name for p in (en / "source").iterdir())
    assert header == ["Username", "Email address", *lessons]
    by = {row[0]: row for row in rows}
    assert sorted(by) == sorted([*LEARNERS, "erin"]) and len(rows) == len(by)
    assert by["alice"][1] == "alice@example.org"
    term = {r["student"]: r for r in _csv(en / "grading" / "term.csv")}
    column = header.index(LESSON)
    assert float(by["alice"][column]) == float(term["alice"][f"{LESSON}:total"])
    assert all(by[s][column] == "" for s in ("bob", "carol", "dave", "erin"))


def test_late_feedback_says_how_late_and_the_policy(graded):
    en, _, _ = graded
    for student in ("alice", "bob"):
        done = course_grade("feedback", str(en), LESSON, "--student", student)
        assert done.returncode == 0, done.stderr
    page = (en / "feedback" / "bob" / LESSON / f"{LESSON}.html").read_text(encoding="utf-8")
    assert "Submitted 1 d 12 h after the due date." in page
    assert late.describe(en, "en") in page and "Late submission penalty" in page
    on_time = (en / "feedback" / "alice" / LESSON / f"{LESSON}.html").read_text(encoding="utf-8")
    assert "after the due date" not in on_time


def test_the_course_sets_the_late_policy_in_its_nbgrader_config(tmp_path, make_course):
    root = make_course(tmp_path / "zh", "zh")
    plugin = late.configured(root)
    assert isinstance(plugin, late.PercentPerDay)
    assert plugin.late_submission_penalty("x", 10.0, 0) == 0
    assert plugin.late_submission_penalty("x", 10.0, 1) == pytest.approx(1.0)  # a day begun
    assert plugin.late_submission_penalty("x", 10.0, 86400 * 30) == pytest.approx(10.0)  # capped
    assert "10 %" in late.describe(root, "en") and "10%" in late.describe(root, "zh")
    assert late.duration(36 * 3600, "zh") == "1 天 12 小时"


def test_the_policy_is_configurable_as_nbgrader_configures_plugins():
    from traitlets.config import Config

    config = Config()
    config.PercentPerDay.percent_per_day = 25
    config.PercentPerDay.max_percent = 60
    config.PercentPerDay.grace_minutes = 30
    plugin = late.PercentPerDay(config=config)
    assert plugin.late_submission_penalty("x", 8.0, 29 * 60) == 0  # within the grace
    assert plugin.late_submission_penalty("x", 8.0, 31 * 60) == pytest.approx(2.0)
    assert plugin.late_submission_penalty("x", 8.0, 5 * 86400) == pytest.approx(4.8)


def _row(student: str, status: str, **fields) -> gradebook_rows.Row:
    values = dict(
        course_root=Path("/course"),
        language="en",
        lesson=LESSON,
        notebook=LESSON,
        student=student,
        first_name="",
        last_name="",
        email="",
        lms_user_id="",
        status=status,
        reason="",
        flags=(),
        score=None,
        max_score=16.0,
        late_penalty=0.0,
        pending_points=0.0,
        timestamp=None,
        seconds_late=0.0,
        exercises=(),
        feedback=None,
    )
    return gradebook_rows.Row(**{**values, **fields})


def test_the_lms_files_hold_only_learners_and_no_formula(tmp_path):
    rows = [
        _row("ann", "graded", score=12.0, late_penalty=2.0, first_name="=HYPERLINK(1)"),
        _row("=cmd", "rejected"),  # not a learner id: nbgrader would read it as a pattern
        _row("ghost", "refused", notebook=""),  # only named by a refused submission
    ]
    canvas = lms.write_canvas(rows, tmp_path / "canvas.csv", {LESSON: "77"})
    with canvas.open(encoding="utf-8", newline="") as handle:
        header, possible, *learners = list(csv.reader(handle))
    assert header[5:] == [f"{LESSON} (77)"] and possible[5:] == ["16"]
    assert learners == [["'=HYPERLINK(1)", "", "", "ann", "", "10"]]
    moodle = lms.write_moodle(rows, tmp_path / "moodle.csv")
    assert moodle.read_text(encoding="utf-8").splitlines() == [
        f"Username,Email address,{LESSON}",
        "ann,,10",
    ]


def _everywhere(root: Path, student: str) -> dict[str, object]:
    """``student``'s lesson as each output shows it: the formgrader (nbgrader's API, which its
    pages read), the gradebook's written answer, the lesson's CSV, the Canvas and Moodle files."""
    from nbgrader.api import Gradebook

    assert course_grade("export", str(root), LESSON).returncode == 0
    api = course.api(root)
    shown = api.get_submission(LESSON, student)
    (listed,) = [n for n in api.get_notebook_submissions(LESSON, LESSON) if n["student"] == student]
    with Gradebook(course.gradebook_url(root)) as gradebook:
        grade = gradebook.find_grade("written_rg2", LESSON, LESSON, student)
        written = (grade.manual_score, grade.needs_manual_grade)
    (row,) = [r for r in _csv(root / "grading" / f"{LESSON}.csv") if r["student"] == student]
    canvas = {r["SIS Login ID"]: r for r in _csv(root / "grading" / f"{LESSON}-canvas.csv")}
    moodle = {r["Username"]: r for r in _csv(root / "grading" / f"{LESSON}-moodle.csv")}
    return {
        "formgrader": (shown["score"], shown["needs_manual_grade"]),
        "formgrader notebook": (listed["score"], listed["needs_manual_grade"]),
        "written": written,
        "csv": (row["total"], row["written_rg2"], row["hand_grading"]),
        "reason": row["reason"],
        "lms": (canvas[student][LESSON], moodle[student][LESSON]),
    }


def test_a_newer_submission_clears_the_earlier_hand_grade_everywhere(tmp_path, make_course):
    """Submit, grade, hand grade; grade the same submission again: the hand grade stands.
    Submit a newer one, grade it: the earlier hand grade counts nowhere and the written
    answer is pending in the formgrader, the CSV and the LMS files alike; mark it again."""
    root = make_course(tmp_path / "en")
    learner = root / "release" / LESSON / f"{LESSON}.ipynb"
    answers = _answers(root)

    def hand_in(written: str, when: str) -> None:
        shutil.rmtree(root / "submitted" / "alice", ignore_errors=True)  # collect replaces it
        path = submit(
            root, "alice", LESSON, submission(learner, {**answers, "written_rg2": written})
        )
        (path.parent / "timestamp.txt").write_text(when, encoding="utf-8")
        done = course_grade(
            "grade", str(root), LESSON, "--student", "alice", "--cell-timeout", "60"
        )
        assert done.returncode == 0, done.stderr[-3000:]

    hand_in(answers["written_rg2"], ON_TIME)
    with_written = _everywhere(root, "alice")
    full = with_written["formgrader"][0] + 2  # every test passes; the written answer waits
    assert with_written["formgrader"] == (full - 2, True)
    assert with_written["csv"] == (f"{full - 2:g}", "pending", "pending: 2 points")
    assert with_written["lms"] == ("", "")

    _hand_grade(root, "alice", "written_rg2", 2)
    marked = {
        "formgrader": (full, False),
        "formgrader notebook": (full, False),
        "written": (2, False),
        "csv": (f"{full:g}", "2", "done"),
        "reason": "",
        "lms": (f"{full:g}", f"{full:g}"),
    }
    assert _everywhere(root, "alice") == marked

    # The same submission graded again (a check changed, say): its hand grade stands.
    done = course_grade("grade", str(root), LESSON, "--student", "alice", "--cell-timeout", "60")
    assert done.returncode == 0, done.stderr[-3000:]
    assert _everywhere(root, "alice") == marked

    # A newer submission, collected and graded: the earlier written answer's 2 points are gone
    # from every total, and every output says the new answer waits for its hand grade.
    hand_in("A leaf needs requires_grad only when the optimizer updates it.", LATER)
    again = _everywhere(root, "alice")
    assert again["formgrader"] == again["formgrader notebook"] == (full - 2, True), again
    assert again["written"] == (None, True)
    assert again["csv"] == (f"{full - 2:g}", "pending", "pending: 2 points"), again
    assert again["lms"] == ("", ""), again
    assert "hand grades of the earlier one (written_rg2 (2)) were cleared" in again["reason"]

    _hand_grade(root, "alice", "written_rg2", 1)
    remarked = _everywhere(root, "alice")
    assert remarked["formgrader"] == (full - 1, False)
    assert remarked["csv"] == (f"{full - 1:g}", "1", "done")
    assert remarked["lms"] == (f"{full - 1:g}", f"{full - 1:g}")
