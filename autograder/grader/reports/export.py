"""Grades as CSV for the instructor: every learner's points, status, reason and lateness.

Per lesson, one row per learner and notebook; for the term, one row per learner with every
lesson's columns side by side, both course languages merged (``gradebook_rows``). A written
answer waiting for the instructor's hand grade counts nothing in ``score`` yet; its own column
says "pending" and ``hand_grading`` says "pending: N points" ("done" once all are graded).
Reasons and flags are in the course's language (the first course given); column names and
statuses are the same in both.
"""

from __future__ import annotations

import csv
from pathlib import Path

from autograder.grader.reports import gradebook_rows
from autograder.grader.reports.gradebook_rows import Row

PERSON = ("student", "first_name", "last_name", "email", "course")
# Per lesson: the person, the lesson, the points, then the exercises' columns, then OUTCOME.
POINTS = ("total", "score", "late_penalty", "max_score")
OUTCOME = (
    "misconceptions",
    "status",
    "reason",
    "flags",
    "timestamp",
    "seconds_late",
    "hand_grading",
)
PENDING = "pending"
TRANSLATED = ("reason", "flags")  # the columns whose text is in the course's language


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def exercise_ids(rows: list[Row]) -> list[str]:
    """Every graded cell's id in the rows, in notebook order."""
    return list(dict.fromkeys(e.grade_id for row in rows for e in row.exercises))


def _exercise_values(row: Row) -> dict[str, str]:
    return {e.grade_id: PENDING if e.pending else _number(e.score) for e in row.exercises}


def _language(rows: list[Row]) -> str:
    """The course's language: the first course's (the one the export is written for)."""
    return rows[0].language if rows else "en"


def _joined(parts, lang: str) -> str:
    return ("；" if lang == "zh" else "; ").join(parts)


def _outcome(row: Row, lang: str) -> dict[str, str]:
    return {
        "misconceptions": " ".join(row.misconceptions),
        "status": row.status,
        "reason": row.reason_in(lang),
        "flags": _joined(row.flag_kinds_in(lang), lang),
        "timestamp": row.timestamp.isoformat(sep=" ") + " UTC" if row.timestamp else "",
        "seconds_late": _number(row.seconds_late) if row.seconds_late else "",
        "hand_grading": row.hand_grading,
    }


def _person(rows: list[Row]) -> dict[str, str]:
    named = next((r for r in rows if r.first_name or r.last_name or r.email), rows[0])
    return {
        "student": rows[0].student,
        "first_name": named.first_name,
        "last_name": named.last_name,
        "email": named.email,
        "course": " ".join(dict.fromkeys(r.language for r in rows if r.status != "refused")),
    }


def lesson_table(rows: list[Row], lang: str | None = None) -> tuple[list[str], list[dict]]:
    """The header and the rows of one lesson's CSV; reasons in ``lang`` (the course's)."""
    lang = lang or _language(rows)
    ids = exercise_ids(rows)
    header = [*PERSON, "assignment", "notebook", *POINTS, *ids, *OUTCOME]
    table = []
    for row in rows:
        values = {
            **_person([row]),
            "assignment": row.lesson,
            "notebook": row.notebook,
            "total": _number(row.total),
            "score": _number(row.score),
            "late_penalty": _number(row.late_penalty) if row.score is not None else "",
            "max_score": _number(row.max_score),
            **_exercise_values(row),
            **_outcome(row, lang),
        }
        table.append({key: values.get(key, "") for key in header})
    return header, table


def lesson_summary(rows: list[Row], lang: str = "en") -> dict[str, str]:
    """One lesson of one learner in a cell each: the notebooks summed, refusals after."""
    own = [r for r in rows if r.status != gradebook_rows.REFUSED]
    totals = [r.total for r in own]
    scored = [r for r in own if r.score is not None]
    values = {
        "total": "" if not own or None in totals else _number(sum(totals)),
        "max_score": _number(sum(r.max_score for r in own)),
        "late_penalty": _number(sum(r.late_penalty for r in scored)) if scored else "",
    }
    for row in own:
        values.update(_exercise_values(row))
    refused = [r for r in rows if r.status == gradebook_rows.REFUSED]
    handed_in = [r for r in own if r.status != gradebook_rows.NOT_SUBMITTED]
    # Their own submission stands and the refusal is said beside it; with none, the lesson
    # shows the refusal.
    parts = [_outcome(r, lang) for r in (handed_in or refused or own)]
    for key in OUTCOME:
        found = dict.fromkeys(p[key] for p in parts if p[key])
        values[key] = _joined(found, lang) if key in TRANSLATED else "; ".join(found)
    if handed_in and refused:
        values["reason"] = _joined([values["reason"], *(r.reason_in(lang) for r in refused)], lang)
    return values


def term_table(rows: list[Row], lang: str | None = None) -> tuple[list[str], list[dict]]:
    """The header and the rows of the term's CSV: one row per learner; reasons in ``lang``."""
    lang = lang or _language(rows)
    lessons = list(dict.fromkeys(sorted(r.lesson for r in rows)))
    ids = {lesson: exercise_ids([r for r in rows if r.lesson == lesson]) for lesson in lessons}
    per_lesson = ("total", "max_score", "late_penalty")
    header = [*PERSON, "term_total", "term_max_score"]
    for lesson in lessons:
        header += [f"{lesson}:{key}" for key in (*per_lesson, *ids[lesson], *OUTCOME)]
    maxima = gradebook_rows.lesson_maxima(rows)
    table = []
    for student, by_lesson in gradebook_rows.by_learner(rows).items():
        values = {**_person([r for found in by_lesson.values() for r in found])}
        values["student"] = student
        total = 0.0
        for lesson, found in by_lesson.items():
            summary = lesson_summary(found, lang)
            total += float(summary["total"] or 0)
            values.update({f"{lesson}:{key}": value for key, value in summary.items()})
            values[f"{lesson}:max_score"] = _number(maxima.get(lesson, 0.0))
        values["term_total"] = _number(total)
        values["term_max_score"] = _number(sum(maxima.values()))
        table.append({key: values.get(key, "") for key in header})
    return header, table


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """A text field a spreadsheet would evaluate (``=…``, ``@…``) gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write_table(header: list[str], table: list[dict], target: Path) -> Path:
    """Write a CSV (UTF-8) whose text fields a spreadsheet will not evaluate."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header)
        writer.writeheader()
        for row in table:
            writer.writerow({k: spreadsheet_safe(v) for k, v in row.items()})
    return target


def write(course_root: Path, assignment: str, target: Path) -> Path:
    """Write the CSV of one lesson and return its path."""
    return write_table(*lesson_table(gradebook_rows.lesson_rows(course_root, assignment)), target)


def write_term(course_roots: list[Path], target: Path) -> Path:
    """Write the term's CSV (every lesson of every course given) and return its path."""
    return write_table(*term_table(gradebook_rows.term_rows(course_roots)), target)
