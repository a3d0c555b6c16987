"""Hand grades across a regrade: they belong to the submission the instructor marked.

The formgrader stores a hand grade in nbgrader's gradebook as the grade's ``manual_score``
(with ``extra_credit`` and the cell's ``manual_comment``), and a written answer still waiting
for one as ``needs_manual_grade``. nbgrader's autograde keeps ``manual_score`` and only sets
``needs_manual_grade`` again ("review it"), so after the autograde of a *newer* submission
the old answer's points still counted in every total while the same row said the hand grade
was pending. Around each autograde of ``course-grade grade`` (worker.py):

- a newer submission than the one the gradebook holds (another ``timestamp.txt``): the
  earlier submission's hand grades and comments are cleared before nbgrader grades it, so
  a written answer is pending again (nbgrader's own flag, as the formgrader sets it for a
  grade with neither score) and counts nothing until the instructor marks the new answer;
  an autograded cell counts its new automatic score;
- the same submission graded again: its hand grades stand, and the flags nbgrader raised
  for them are put back as they were.

The formgrader, the CSV and the Canvas / Moodle files all read the gradebook, so they agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

TIMESTAMP = "timestamp.txt"
CLEARED = (
    "a newer submission: the hand grades of the earlier one ({listed}) were cleared; "
    "mark its answers again",
    "这是一份更新的提交：之前那份提交的人工评分（{listed}）已清除，请重新评阅新的答案",
)


@dataclass(frozen=True)
class Before:
    """What a regrade found in the gradebook before nbgrader graded the submission."""

    kept: dict[tuple[str, str], bool] = field(default_factory=dict)  # (nb, grade) -> flag
    cleared: dict[tuple[str, str], float] = field(default_factory=dict)  # -> points it had


def submitted_at(folder: Path) -> datetime | None:
    """The submission's time as nbgrader reads it from ``folder`` (naive UTC), or None."""
    from nbgrader.utils import parse_utc

    try:
        return parse_utc((folder / TIMESTAMP).read_text(encoding="utf-8").strip())
    except (OSError, ValueError, OverflowError):
        return None


def before_autograde(db_url: str, assignment: str, student: str, when: datetime | None) -> Before:
    """Settle the hand grades of ``student``'s ``assignment`` before the autograde of the
    submission made at ``when``: cleared when it is a newer submission than the gradebook's,
    noted (to be put back by :func:`after_autograde`) when it is the same one."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gradebook:
        try:
            earlier = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return Before()
        same = earlier.timestamp == when
        kept, cleared = {}, {}
        for notebook in earlier.notebooks:
            for grade in notebook.grades:
                if grade.manual_score is None and grade.extra_credit is None:
                    continue
                key = (notebook.name, grade.name)
                if same:
                    kept[key] = bool(grade.needs_manual_grade)
                    continue
                cleared[key] = float(grade.manual_score or 0.0) + float(grade.extra_credit or 0.0)
                grade.manual_score = None
                grade.extra_credit = None
                # As the formgrader's grade handler sets it for a grade without a hand grade.
                grade.needs_manual_grade = grade.auto_score is None
            if not same:
                for comment in notebook.comments:
                    comment.manual_comment = None
        gradebook.db.commit()
    return Before(kept, cleared)


def after_autograde(db_url: str, assignment: str, student: str, before: Before) -> None:
    """Put back the flags nbgrader raised on the hand grades of the same submission."""
    if not before.kept:
        return
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url) as gradebook:
        for (notebook, grade_id), flag in before.kept.items():
            try:
                grade = gradebook.find_grade(grade_id, notebook, assignment, student)
            except MissingEntry:
                continue
            if grade.manual_score is not None:
                grade.needs_manual_grade = flag
        gradebook.db.commit()


def said(before: Before, notebook: str):
    """What a regrade that cleared hand grades of ``notebook`` tells the instructor (a part of
    the record's reason, both languages); None when it cleared none."""
    from autograder.grader import reasons

    found = {grade: points for (nb, grade), points in before.cleared.items() if nb == notebook}
    if not found:
        return None
    listed = ", ".join(f"{grade} ({points:g})" for grade, points in found.items())
    return reasons.says(*CLEARED, listed=listed)
