"""Grades as CSV: a score, a status and a reason for every learner and notebook.

A written answer waiting for the instructor's hand grade counts nothing in ``score`` yet;
``hand_grading`` says so ("pending: N points"), and "done" once every one is graded.
"""

from __future__ import annotations

import csv
from pathlib import Path

from autograder import course
from autograder.grader import records, submission

COLUMNS = (
    "student",
    "assignment",
    "notebook",
    "score",
    "max_score",
    "hand_grading",
    "status",
    "reason",
    "flags",
)


def hand_grading(notebook) -> str:
    """ "pending: N points" while written answers wait for a hand grade, "done" once all
    have one, "" for a notebook with none (an nbgrader SubmittedNotebook)."""
    pending = sum(grade.max_score for grade in notebook.grades if grade.needs_manual_grade)
    if pending:
        return f"pending: {pending:g} points"
    if any(grade.manual_score is not None for grade in notebook.grades):
        return "done"
    return ""


def rows(course_root: Path, assignment: str) -> list[dict]:
    """One row per learner and notebook, joining the gradebook with the grading records."""
    from nbgrader.api import Gradebook, MissingEntry

    by_key = {(r.student, r.notebook): r for r in records.load(course_root, assignment)}
    learners = sorted(
        {r.student for r in by_key.values()} | set(submission.students(course_root, assignment))
    )
    out = []
    with Gradebook(course.gradebook_url(course_root)) as gradebook:
        for student in learners:
            for name in submission.expected_notebooks(course_root, assignment):
                record = by_key.get((student, name))
                score = max_score = hand = ""
                try:
                    nb = gradebook.find_submission_notebook(name, assignment, student)
                    score, max_score, hand = nb.score, nb.max_score, hand_grading(nb)
                except MissingEntry:
                    pass
                if record and record.status == "rejected":
                    score = hand = ""  # nothing of it was read; an older score no longer stands
                status = record.status if record else "not graded"
                reason = record.reason if record else "no grading record: run `grade` first"
                flags = "; ".join(f["kind"] for f in record.flags) if record else ""
                values = (student, assignment, name, score, max_score, hand, status, reason, flags)
                out.append(dict(zip(COLUMNS, values, strict=True)))
    return out


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """A text field a spreadsheet would evaluate (``=…``, ``@…``) gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write(course_root: Path, assignment: str, target: Path) -> Path:
    """Write the CSV for one assignment and return its path."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows(course_root, assignment):
            writer.writerow({k: spreadsheet_safe(v) for k, v in row.items()})
    return target
