"""Grade files a learning management system imports: Canvas's and Moodle's CSV formats.

One row per learner (both course languages merged), one column per lesson holding the
learner's points after any late penalty. A cell is empty where there is no grade to hand on
yet: hand grading pending, nothing submitted, refused at collect, or no score (an error, a
rejected or unreadable file: the export's status and reason say which). README, "Term outputs",
says how each system reads the file.
"""

from __future__ import annotations

import csv
from pathlib import Path

from autograder.grader.pipeline import submission
from autograder.grader.reports import gradebook_rows
from autograder.grader.reports.export import spreadsheet_safe
from autograder.grader.reports.gradebook_rows import Row

# Canvas: Gradebook > Import. The five columns Canvas's own export starts with; Canvas matches a
# learner by ID (Canvas's user id: nbgrader's lms_user_id), then SIS User ID, then SIS Login ID.
CANVAS_PERSON = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
# The row after the header, as in Canvas's export: each assignment's points possible, which
# Canvas uses when an import creates the assignment.
CANVAS_POINTS_POSSIBLE = "    Points Possible"
# Moodle: Grades > Import > CSV file. Map "Username" (or "Email address") to the user field of
# the same name, and each lesson column to its grade item (or a new one).
MOODLE_PERSON = ("Username", "Email address")


def lesson_grade(rows: list[Row]) -> float | None:
    """A learner's points for a lesson, or None when there is none to hand on yet."""
    own = [r for r in rows if r.status != gradebook_rows.REFUSED]
    if not own or not all(r.final for r in own):
        return None
    return sum(r.total for r in own)


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def roster(rows: list[Row]) -> list[tuple[Row, dict[str, float | None]]]:
    """Every learner with a submission or a place in a gradebook: a row naming them, and
    their grade per lesson (a name seen only in a refused submission is no learner)."""
    out = []
    for student, by_lesson in gradebook_rows.by_learner(rows).items():
        own = [r for found in by_lesson.values() for r in found if r.status != "refused"]
        if own and submission.valid_learner_id(student):  # no id nbgrader reads as a pattern
            named = next((r for r in own if r.first_name or r.last_name or r.lms_user_id), own[0])
            out.append(
                (named, {lesson: lesson_grade(found) for lesson, found in by_lesson.items()})
            )
    return out


def _canvas_name(row: Row) -> str:
    if row.last_name and row.first_name:
        return f"{row.last_name}, {row.first_name}"
    return row.last_name or row.first_name or row.student


def canvas_column(lesson: str, assignment_ids: dict[str, str]) -> str:
    """ "Name (ID)" for an assignment Canvas already has; the name alone for a new one."""
    known = assignment_ids.get(lesson)
    return f"{lesson} ({known})" if known else lesson


def write_canvas(
    rows: list[Row], target: Path, assignment_ids: dict[str, str] | None = None
) -> Path:
    """Write Canvas's gradebook import CSV; ``assignment_ids`` maps a lesson to the id of the
    Canvas assignment it fills (without one, Canvas offers to create or match it)."""
    ids = assignment_ids or {}
    lessons = sorted({r.lesson for r in rows})
    maxima = gradebook_rows.lesson_maxima(rows)
    table = [
        [*CANVAS_PERSON, *(canvas_column(lesson, ids) for lesson in lessons)],
        [CANVAS_POINTS_POSSIBLE, "", "", "", "", *(_number(maxima.get(x)) for x in lessons)],
    ]
    for person, grades in roster(rows):
        who = [_canvas_name(person), person.lms_user_id, "", person.student, ""]
        table.append([*who, *(_number(grades.get(lesson)) for lesson in lessons)])
    return _write(table, target)


def write_moodle(rows: list[Row], target: Path) -> Path:
    """Write a CSV for Moodle's grade import: an identifier column, one per grade item."""
    lessons = sorted({r.lesson for r in rows})
    table = [[*MOODLE_PERSON, *lessons]]
    for person, grades in roster(rows):
        table.append([person.student, person.email, *(_number(grades.get(x)) for x in lessons)])
    return _write(table, target)


def _write(table: list[list[str]], target: Path) -> Path:
    """Write a UTF-8 CSV whose text cells a spreadsheet will not evaluate (names are data)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([spreadsheet_safe(cell) for cell in row] for row in table)
    return target
