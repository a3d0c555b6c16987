"""Every learner's outcome per lesson, read once for the export, the LMS files and the report.

nbgrader's gradebook holds the points, the submission time, the due date and the late penalty;
the grading records (``records.py``) say why (status, reason, flags, misconceptions named by
the judge); collect's refusals (``autograder/classroom/owned.py``) list submissions made in
another learner's name. This module joins the three into plain rows and stores nothing itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import nbformat

from autograder import course
from autograder.common.i18n import Text
from autograder.common.misconceptions import CATALOGUE
from autograder.grader import reasons
from autograder.grader.pipeline import records, submission

REFUSED = "refused"  # a submission collect refused: not its learner's own work
NOT_SUBMITTED = "not submitted"  # a learner of the gradebook with no submission of the lesson
NOT_GRADED = "not graded"  # a submission without a grading record: `grade` has not run on it
NO_RECORD = Text("no grading record: run `grade` first", "没有评分记录：请先运行 `grade`")
NOTHING_SUBMITTED = Text("nothing submitted", "没有提交任何内容")
REFUSED_REASON = (
    "refused at collect: it claims to be {claimed}'s submission but {owner} made it; "
    "it was not collected",
    "收取时被拒：它自称是 {claimed} 的提交，实际却由 {owner} 提交；未被收取",
)
# Collect also refuses a submission of the learner's own account that is not their own work
# (autograder/classroom/owned.py): "{where}" is the path inside the submission.
_NOT_OWN_WORK = (
    "refused at collect: {claimed}'s submission holds what is not {claimed}'s own work "
    "({where} {what}); it was not collected",
    "收取时被拒：{claimed} 的提交中含有不属于 {claimed} 本人的内容（{where}{what}）；未被收取",
)
_PROBLEM = {
    "link": ("is a symbolic link", " 是符号链接"),
    "hard link": ("is a hard link, a file with another name", " 是硬链接（另有名称的文件）"),
    "other owner": ("belongs to {owner}", " 属于 {owner}"),
    "not plain": ("is neither a folder nor a file", " 既不是文件夹也不是文件"),
    "not a folder": ("is a file, not a folder", " 是文件而不是文件夹"),
    "too big": ("makes it bigger than the course allows", " 使提交超出课程允许的大小"),
    "changed": ("changed while it was collected", " 在收取过程中被改动"),
    "unreadable": ("cannot be read by the instructor", " 教师无权读取"),
}


@dataclass(frozen=True)
class Exercise:
    """One graded cell of a learner's notebook."""

    grade_id: str
    kind: str  # "test" (autograded test cell), "written" (markdown), "code answer" (hand-graded)
    score: float | None  # None: waiting for a hand grade, or nothing graded
    max_score: float
    pending: bool  # waiting for the instructor's hand grade
    misconceptions: tuple[str, ...]  # catalogue IDs the judge named in this cell's verdict


@dataclass(frozen=True)
class Row:
    """One learner's notebook of one lesson, or a submission refused at collect."""

    course_root: Path
    language: str  # the course's language: "en" or "zh"
    lesson: str
    notebook: str  # "" for a refused submission (nothing of it was collected)
    student: str
    first_name: str
    last_name: str
    email: str
    lms_user_id: str
    status: str  # records.STATUSES, or REFUSED, NOT_SUBMITTED, NOT_GRADED
    reason: str  # in English; reason_zh beside it (reasons.py), shown by reason_in
    flags: tuple[dict, ...]  # integrity flags: {"kind", "cell", "detail", "voids"} (+ "_zh")
    score: float | None  # nbgrader's points before any late penalty; None: no score
    max_score: float
    late_penalty: float  # points nbgrader's late-submission plugin took off
    pending_points: float  # points of answers still waiting for a hand grade
    timestamp: datetime | None  # the submission's time (UTC), as nbgrader recorded it
    seconds_late: float  # past the due date (with any extension), as nbgrader computes it
    exercises: tuple[Exercise, ...]
    feedback: Path | None  # the learner's feedback page, once `feedback` wrote it
    reason_zh: str = ""  # "" in a record saved before reasons had a Chinese side

    @property
    def total(self) -> float | None:
        """Points the learner has: nbgrader's score less the late penalty."""
        return None if self.score is None else self.score - self.late_penalty

    @property
    def misconceptions(self) -> tuple[str, ...]:
        """Every catalogue ID the judge named in this notebook, in exercise order."""
        return tuple(dict.fromkeys(i for e in self.exercises for i in e.misconceptions))

    @property
    def flag_kinds(self) -> tuple[str, ...]:
        return tuple(flag["kind"] for flag in self.flags)

    def reason_in(self, lang: str) -> str:
        return reasons.shown(self, "reason", lang)

    def flag_kinds_in(self, lang: str) -> tuple[str, ...]:
        return tuple(reasons.shown(flag, "kind", lang) for flag in self.flags)

    def flag_details_in(self, lang: str) -> tuple[str, ...]:
        """Each flag as "kind (cell: detail)" in ``lang``."""
        en, zh = "{kind} ({cell}: {detail})", "{kind}（{cell}：{detail}）"
        return tuple(
            (zh if lang == "zh" else en).format(
                kind=reasons.shown(flag, "kind", lang),
                cell=_shown(reasons.cell_name(str(flag.get("cell", ""))), lang),
                detail=reasons.shown(flag, "detail", lang),
            )
            for flag in self.flags
        )

    @property
    def hand_grading(self) -> str:
        """ "pending: N points", "done" once every hand-graded answer has its grade, or ""."""
        if self.pending_points:
            return f"pending: {self.pending_points:g} points"
        hand = [e for e in self.exercises if e.kind != "test"]
        return "done" if hand and self.score is not None else ""

    @property
    def final(self) -> bool:
        """Whether the total is a grade to hand on: scored, and no hand grade pending."""
        return self.total is not None and not self.pending_points


def _shown(value: Text | str, lang: str) -> str:
    return value(lang) if isinstance(value, Text) else value


def lessons(course_root: Path) -> list[str]:
    """The course's lessons (nbgrader assignments), in order."""
    return sorted(p.name for p in (course_root / "source").iterdir() if p.is_dir())


def refused_at_collect(course_root: Path, lesson: str) -> list[dict]:
    """The submissions collect refused: {"username", "owner", "timestamp", "filename"}, and
    where it was the learner's own account's, "problem" and "path" (see classroom/owned.py)."""
    from autograder.classroom.owned import REFUSED as FOLDER

    try:
        found = json.loads((course_root / FOLDER / f"{lesson}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []


def _exercise_kinds(course_root: Path, lesson: str, notebook: str) -> dict[str, str]:
    """Graded cells' kinds by grade id, in the notebook's order (the source notebook)."""
    path = course_root / "source" / lesson / f"{notebook}.ipynb"
    kinds = {}
    for cell in nbformat.read(str(path), as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("grade"):
            continue
        if cell.cell_type == "markdown":
            kinds[meta["grade_id"]] = "written"
        else:
            kinds[meta["grade_id"]] = "code answer" if meta.get("solution") else "test"
    return kinds


def _misconceptions(record: records.GradeRecord | None, grade_id: str) -> tuple[str, ...]:
    verdict = record.verdicts.get(grade_id, {}) if record else {}
    found = verdict.get("misconceptions", []) if isinstance(verdict, dict) else []
    return tuple(i for i in found if i in CATALOGUE)  # the judge's IDs, never printed text


def _exercises(kinds, grades, record) -> tuple[Exercise, ...]:
    by_id = {grade.name: grade for grade in grades}
    out = []
    for grade_id, kind in kinds.items():
        grade = by_id.get(grade_id)
        pending = bool(grade is not None and grade.needs_manual_grade)
        score = None if grade is None or pending else float(grade.score)
        maximum = float(grade.max_score) if grade is not None else 0.0
        out.append(
            Exercise(grade_id, kind, score, maximum, pending, _misconceptions(record, grade_id))
        )
    return tuple(out)


def lesson_rows(course_root: Path, lesson: str) -> list[Row]:
    """One row per learner and notebook of the lesson (every learner the gradebook, the
    records or submitted/ know), then one per submission refused at collect."""
    from nbgrader.api import Gradebook, MissingEntry

    root = course_root.resolve()
    language = course.language(root)
    by_key = {(r.student, r.notebook): r for r in records.load(root, lesson)}
    names = submission.expected_notebooks(root, lesson)
    kinds = {name: _exercise_kinds(root, lesson, name) for name in names}
    rows = []
    with Gradebook(course.gradebook_url(root)) as gradebook:
        people = {s.id: s for s in gradebook.students}
        learners = sorted(
            set(people) | {s for s, _ in by_key} | set(submission.students(root, lesson))
        )
        maxima = {}
        for name in names:
            try:
                maxima[name] = float(gradebook.find_notebook(name, lesson).max_score)
            except MissingEntry:
                maxima[name] = 0.0
        for student in learners:
            person = people.get(student)
            try:
                handed_in = gradebook.find_submission(lesson, student)
            except MissingEntry:
                handed_in = None
            for name in names:
                record = by_key.get((student, name))
                notebook = None
                if handed_in is not None:
                    notebook = next((n for n in handed_in.notebooks if n.name == name), None)
                rows.append(
                    _row(
                        root,
                        language,
                        lesson,
                        name,
                        student,
                        person,
                        record,
                        handed_in,
                        notebook,
                        kinds[name],
                        maxima[name],
                    )
                )
    for item in refused_at_collect(root, lesson):
        rows.append(_refused_row(root, language, lesson, item, maxima_total=sum(maxima.values())))
    return rows


def _row(
    root, language, lesson, name, student, person, record, handed_in, notebook, kinds, maximum
) -> Row:
    submitted = (root / "submitted" / student / lesson).exists()
    if record:
        status, reason = record.status, {"reason": record.reason, "reason_zh": record.reason_zh}
    elif submitted or handed_in is not None:
        status, reason = NOT_GRADED, reasons.fields("reason", NO_RECORD)
    else:
        status, reason = NOT_SUBMITTED, reasons.fields("reason", NOTHING_SUBMITTED)
    score = penalty = pending = 0.0
    grades = ()
    # A rejected folder was never read, and nbgrader could not grade an errored one: any
    # score the gradebook holds for them is not theirs (an older grading's, or none).
    if notebook is not None and status not in ("rejected", "error"):
        penalty = float(notebook.late_submission_penalty or 0.0)
        grades = notebook.grades
        pending = float(sum(g.max_score for g in grades if g.needs_manual_grade))
        # An answer waiting for its hand grade counts nothing, also where the gradebook still
        # holds an older hand grade for it (nbgrader's own autograde keeps one and flags it;
        # course-grade clears a newer submission's: hand_grades.py).
        score = float(notebook.score) - sum(float(g.score) for g in grades if g.needs_manual_grade)
    page = root / "feedback" / student / lesson / f"{name}.html"
    return Row(
        course_root=root,
        language=language,
        lesson=lesson,
        notebook=name,
        student=student,
        first_name=(person.first_name or "") if person else "",
        last_name=(person.last_name or "") if person else "",
        email=(person.email or "") if person else "",
        lms_user_id=(person.lms_user_id or "") if person else "",
        status=status,
        **reason,
        flags=tuple(record.flags) if record else (),
        score=score if grades else None,
        max_score=float(notebook.max_score) if notebook is not None else maximum,
        late_penalty=penalty,
        pending_points=pending,
        timestamp=handed_in.timestamp if handed_in is not None else None,
        seconds_late=float(handed_in.total_seconds_late) if handed_in is not None else 0.0,
        exercises=_exercises(kinds, grades, record),
        feedback=page if page.is_file() else None,
    )


def _refusal(item: dict, claimed: str, owner: str) -> Text:
    """Why collect refused ``item``, in both languages."""
    problem = str(item.get("problem", "owner"))
    if problem not in _PROBLEM:
        return reasons.says(*REFUSED_REASON, claimed=claimed, owner=owner)
    en, zh = (part.format(owner=owner) for part in _PROBLEM[problem])
    where = str(item.get("path") or "") or "."
    return reasons.says(*_NOT_OWN_WORK, claimed=claimed, where=where, what=Text(en, zh))


def _refused_row(root, language, lesson, item, maxima_total) -> Row:
    claimed, owner = str(item.get("username", "")), str(item.get("owner", ""))
    try:
        when = datetime.fromisoformat(str(item.get("timestamp", "")))
        if when.tzinfo:  # naive UTC, as nbgrader stores a submission's time
            when = when.astimezone(UTC).replace(tzinfo=None)
    except ValueError:
        when = None
    reason = _refusal(item, claimed, owner)
    return Row(
        course_root=root,
        language=language,
        lesson=lesson,
        notebook="",
        student=claimed,
        first_name="",
        last_name="",
        email="",
        lms_user_id="",
        status=REFUSED,
        **reasons.fields("reason", reason),
        flags=(),
        score=None,
        max_score=maxima_total,
        late_penalty=0.0,
        pending_points=0.0,
        timestamp=when,
        seconds_late=0.0,
        exercises=(),
        feedback=None,
    )


def term_rows(course_roots: list[Path]) -> list[Row]:
    """Every lesson's rows of every course given (one per course language), together."""
    return [
        row
        for root in course_roots
        for lesson in lessons(root)
        for row in lesson_rows(root, lesson)
    ]


def by_learner(rows: list[Row]) -> dict[str, dict[str, list[Row]]]:
    """Learner -> lesson -> the learner's rows of it, both course languages merged.

    A learner may be in the English or the Chinese course, or in both: the rows of a lesson
    come from the course the learner handed it in to (the later submission where both have
    one; the first course given where neither has); submissions refused at collect follow.
    """
    grouped: dict[str, dict[str, dict[Path, list[Row]]]] = {}
    refused: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if row.status == REFUSED:
            refused.setdefault((row.student, row.lesson), []).append(row)
            continue
        per_course = grouped.setdefault(row.student, {}).setdefault(row.lesson, {})
        per_course.setdefault(row.course_root, []).append(row)
    for student, lesson in refused:
        grouped.setdefault(student, {}).setdefault(lesson, {})
    out: dict[str, dict[str, list[Row]]] = {}
    for student in sorted(grouped):
        out[student] = {}
        for lesson in sorted(grouped[student]):
            choices = list(grouped[student][lesson].values())
            handed_in = [c for c in choices if any(r.status != NOT_SUBMITTED for r in c)]
            if handed_in:
                chosen = max(handed_in, key=lambda c: max(_when(r) for r in c))
            else:
                chosen = choices[0] if choices else []
            out[student][lesson] = chosen + refused.get((student, lesson), [])
    return out


def _when(row: Row) -> datetime:
    return row.timestamp or datetime.min


def lesson_maxima(rows: list[Row]) -> dict[str, float]:
    """Each lesson's points in all: its notebooks' maximum scores, summed."""
    per_notebook: dict[tuple[str, str], float] = {}
    for row in rows:
        if row.notebook:
            key = (row.lesson, row.notebook)
            per_notebook[key] = max(per_notebook.get(key, 0.0), row.max_score)
    maxima: dict[str, float] = {}
    for (lesson, _), points in sorted(per_notebook.items()):
        maxima[lesson] = maxima.get(lesson, 0.0) + points
    return maxima
