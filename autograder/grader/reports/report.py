"""The class report: what the class got right, which beliefs cost points, who needs a look.

One self-contained HTML page per lesson, or for the whole term (every lesson of the
English and the Chinese course together), in the language the instructor asks for.
It reads nothing itself: every number comes from ``gradebook_rows`` (nbgrader's
gradebook, the grading records, collect's refusals), and every figure has a table of
the same numbers beside it.
"""

from __future__ import annotations

import html
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder import course
from autograder.common.i18n import Text
from autograder.common.misconceptions import CATALOGUE
from autograder.grader.pipeline import late
from autograder.grader.reports import gradebook_rows, report_figures
from autograder.grader.reports.gradebook_rows import NOT_GRADED, NOT_SUBMITTED, REFUSED, Row
from autograder.grader.reports.report_html import (
    Cell,
    Markup,
    abbreviation,
    figure,
    folding,
    link,
    page,
    paragraph,
    section,
)
from autograder.grader.reports.report_html import table as html_table

refused_at_collect = gradebook_rows.refused_at_collect  # kept here for older callers

T = {
    "title": Text("Class report — {a}", "班级报告 —— {a}"),
    "term_title": Text("Term report", "学期报告"),
    "status": Text("Grading status", "评分状态"),
    "learners": Text("learners", "学生人数"),
    "histogram": Text("Total scores", "总分分布"),
    "points": Text("points", "得分"),
    "no_scores": Text("No learner has a score yet.", "还没有学生得到分数。"),
    "exercises": Text(
        "Exercises: points earned and misconceptions behind lost points",
        "各练习：得分情况与失分背后的常见误区",
    ),
    "exercise": Text("exercise", "练习"),
    "max": Text("max", "满分"),
    "mean": Text("mean", "平均分"),
    "mean_share": Text("mean / max", "平均分 / 满分"),
    "full_share": Text("full marks", "得满分"),
    "scored": Text("learners scored", "计分学生数"),
    "lost_to": Text(
        "misconceptions where points were lost (learners)", "失分处命中的常见误区（学生数）"
    ),
    "no_exercise": Text("No exercise has been scored yet.", "还没有已计分的练习。"),
    "misconceptions": Text("Misconceptions hit", "命中的常见误区"),
    "belief": Text("the belief", "错误观念"),
    "no_misconception": Text("No misconception was found.", "没有发现常见误区。"),
    "learner_table": Text("Learners", "学生"),
    "sort_hint": Text("Click a column's title to sort by it.", "点击列标题可按该列排序。"),
    "learner": Text("learner", "学生"),
    "name": Text("name", "姓名"),
    "course": Text("course", "课程"),
    "total": Text("total", "总分"),
    "late": Text("late", "迟交"),
    "penalty": Text("late penalty", "迟交扣分"),
    "flags": Text("integrity flags", "诚信标记"),
    "feedback": Text("feedback", "反馈"),
    "open": Text("open", "查看"),
    "none": Text("none", "无"),
    "attention": Text("Needs attention", "需要处理"),
    "nothing_needs": Text("Nothing needs attention.", "没有需要处理的事项。"),
    "lesson": Text("lesson", "课"),
    "lesson_n": Text("Lesson {n}: {name}", "第 {n} 课：{name}"),
    "what": Text("what", "事项"),
    "group_count": Text("{what}: {n}", "{what}：{n} 项"),
    "detail": Text("detail", "详情"),
    "policy": Text("Late policy", "迟交规则"),
    "term_lessons": Text("Lessons", "各课概况"),
    "submitted": Text("submitted", "已提交"),
    "by_lesson": Text("Misconceptions per lesson", "各课命中的常见误区"),
    "repeated": Text("The same misconception in several lessons", "多课重复命中的常见误区"),
    "repeated_none": Text(
        "No learner hit the same misconception in two lessons.",
        "没有学生在两课中命中同一个常见误区。",
    ),
    "lessons": Text("lessons", "课"),
    "no_lesson": Text("No lesson has submissions yet.", "还没有任何一课收到提交。"),
    "waiting": Text("No submissions yet: {names}.", "尚无提交：{names}。"),
}
# Why a row needs the instructor, and what to do about it.
ATTENTION = {
    "error": Text(
        "grading failed: regrade once the cause is fixed", "评分失败：排除原因后重新评分"
    ),
    "not_graded": Text(
        "not graded yet: run `course-grade grade`", "尚未评分：请运行 `course-grade grade`"
    ),
    "submission": Text("the submission could not be graded in full", "提交未能完整评分"),
    "flagged": Text("integrity flag: read the submission", "诚信标记：请查看该提交"),
    "pending": Text("hand grading pending: {points:g} points", "待人工评分：{points:g} 分"),
    "late": Text("late by {how}; penalty {penalty:g} points", "迟交 {how}；扣 {penalty:g} 分"),
    "refused": Text(
        "refused at collect: not the learner's own work", "收取时被拒：不是该学生本人的作业"
    ),
}
# The groups of the needs-attention list, the most urgent first.
ATTENTION_GROUP = {
    "error": Text("Grading failed", "评分失败"),
    "not_graded": Text("Not graded yet", "尚未评分"),
    "submission": Text("Not graded in full", "未能完整评分"),
    "refused": Text("Refused at collect", "收取时被拒"),
    "flagged": Text("Integrity flags", "诚信标记"),
    "pending": Text("Hand grading pending", "待人工评分"),
    "late": Text("Late", "迟交"),
}
OPEN_GROUP_ROWS = 20  # a longer group starts folded: its title still gives the count
STATUS = {
    "graded": Text("graded", "已评分"),
    "missing": Text("notebook missing", "缺少笔记本"),
    "timed out": Text("timed out", "超时"),
    "crashed": Text("crashed", "崩溃"),
    "corrupt file": Text("corrupt file", "文件损坏"),
    "error": Text("grading error", "评分出错"),
    "flagged": Text("flagged", "已标记"),
    "rejected": Text("rejected unread", "未读取即拒收"),
    REFUSED: Text("refused at collect", "收取时被拒"),
    NOT_SUBMITTED: Text("not submitted", "未提交"),
    NOT_GRADED: Text("not graded yet", "尚未评分"),
}

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff·]+")  # CJK ideographs (and the name dot)

NOT_GRADED_IN_FULL = {"missing", "timed out", "crashed", "corrupt file", "rejected"}


def _status(status: str, lang: str) -> str:
    """A status in ``lang``; a lesson of several notebooks has theirs joined (Work.status)."""
    return ", ".join(STATUS[s](lang) if s in STATUS else s for s in status.split(", "))


def _joined(parts, lang: str) -> str:
    return ("；" if lang == "zh" else "; ").join(parts)


@dataclass(frozen=True)
class Work:
    """One learner's lesson: the rows of its notebooks, in the course the learner used."""

    student: str
    lesson: str
    rows: tuple[Row, ...]

    @property
    def handed_in(self) -> bool:
        return any(r.status != NOT_SUBMITTED for r in self.rows)

    @property
    def total(self) -> float | None:
        scored = [r.total for r in self.rows if r.total is not None]
        return sum(scored) if scored else None

    @property
    def max_score(self) -> float:
        return sum(r.max_score for r in self.rows)

    @property
    def status(self) -> str:
        return (
            self.rows[0].status
            if len(self.rows) == 1
            else ", ".join(dict.fromkeys(r.status for r in self.rows))
        )

    @property
    def exercises(self):
        return [e for r in self.rows for e in r.exercises]

    @property
    def misconceptions(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i for r in self.rows for i in r.misconceptions))

    @property
    def name(self) -> str:
        """Given and family name as the name is written: 李婷 (family first, no space) when
        both are Chinese, Emma Jones otherwise."""
        row = self.rows[0]
        if row.first_name and row.last_name and _HAN.fullmatch(row.first_name + row.last_name):
            return row.last_name + row.first_name
        return f"{row.first_name} {row.last_name}".strip()


def _works(rows: Sequence[Row]) -> tuple[list[Work], list[Row]]:
    """Each learner's lessons (both course languages merged) and the refused submissions."""
    works, refused = [], []
    for student, lessons in gradebook_rows.by_learner(list(rows)).items():
        for lesson, found in lessons.items():
            refused += [r for r in found if r.status == REFUSED]
            own = tuple(r for r in found if r.status != REFUSED)
            if own:
                works.append(Work(student, lesson, own))
    return works, refused


def misconception_counts(course_root: Path, assignment: str) -> Counter:
    """How many learners each misconception ID was found in, by the grader's own verdicts.

    Only the judge's verdicts count (the grading records, through gradebook_rows): text
    printed in a notebook, which learner code can write, never does.
    """
    works, _ = _works(gradebook_rows.lesson_rows(course_root, assignment))
    return Counter(i for w in works for i in w.misconceptions)


# ---------------------------------------------------------------------------------------
# Sections of one lesson


def _status_section(works: list[Work], refused: list[Row], lang: str) -> Markup:
    counts = Counter(w.status for w in works) + Counter(r.status for r in refused)
    rows = [(_status(s, lang), Cell(n, n)) for s, n in sorted(counts.items())]
    return section(T["status"](lang), html_table((T["status"](lang), T["learners"](lang)), rows))


def _histogram(lesson: str, works: list[Work], lang: str, level: int = 2) -> Markup:
    scored = [w.total for w in works if w.total is not None]
    maximum = max((w.max_score for w in works), default=0.0)
    bins = report_figures.histogram(scored, maximum)
    uri = report_figures.score_histogram(bins, lang)
    counts = html_table(  # one row of counts under the bins' labels: the figure's numbers
        (T["points"](lang), *(b.label() for b in bins)),
        [(T["learners"](lang), *(b.count for b in bins))],
        css=f"histogram histogram-{lesson}",
    )
    alt = f"{T['histogram'](lang)}: " + ", ".join(f"{b.label()}: {b.count}" for b in bins)
    shown = figure(uri, alt, T["no_scores"](lang))
    return section(T["histogram"](lang), shown, counts if uri else "", level=level)


def _exercise_stats(works: list[Work]) -> list[tuple[str, float, list[float], Counter]]:
    """Per graded cell: max, the scores learners have, misconception IDs where points were lost."""
    order: dict[str, float] = {}
    scores: dict[str, list[float]] = {}
    lost: dict[str, Counter] = {}
    for work in works:
        for e in work.exercises:
            order.setdefault(e.grade_id, e.max_score)
            if e.score is None:
                continue
            scores.setdefault(e.grade_id, []).append(e.score)
            if e.score < e.max_score:
                lost.setdefault(e.grade_id, Counter()).update(set(e.misconceptions))
    return [(g, m, scores.get(g, []), lost.get(g, Counter())) for g, m in order.items()]


def _exercises(works: list[Work], lang: str, level: int = 2) -> Markup:
    stats = [s for s in _exercise_stats(works) if s[2] and s[1] > 0]
    if not stats:
        return section(T["exercises"](lang), paragraph(T["no_exercise"](lang)), level=level)
    shares = [
        (g, sum(scores) / len(scores) / m, sum(s >= m for s in scores) / len(scores))
        for g, m, scores, _ in stats
    ]
    uri = report_figures.difficulty(shares, lang)
    rows = []
    for (grade_id, maximum, scores, lost), (_, mean_share, full_share) in zip(
        stats, shares, strict=True
    ):
        mean = sum(scores) / len(scores)
        behind = ", ".join(f"{i} ({n})" for i, n in sorted(lost.items(), key=lambda x: -x[1]))
        rows.append(
            (
                grade_id,
                Cell(f"{maximum:g}", maximum),
                Cell(f"{mean:.2f}", mean),
                Cell(f"{100 * mean_share:.0f} %", mean_share),
                Cell(f"{100 * full_share:.0f} %", full_share),
                Cell(len(scores), len(scores)),
                behind or "—",
            )
        )
    headers = ("exercise", "max", "mean", "mean_share", "full_share", "scored", "lost_to")
    return section(
        T["exercises"](lang),
        figure(uri, T["exercises"](lang), T["no_exercise"](lang)),
        html_table([T[h](lang) for h in headers], rows, sortable=True),
        level=level,
    )


def _misconceptions(works: list[Work], lang: str, level: int = 2) -> Markup:
    counts = Counter(i for w in works for i in w.misconceptions)
    beliefs = {i: CATALOGUE[i].belief(lang) for i in counts if i in CATALOGUE}
    uri = report_figures.misconception_bars(counts, beliefs, lang)
    if uri is None:
        return section(
            T["misconceptions"](lang), paragraph(T["no_misconception"](lang)), level=level
        )
    ids = sorted(counts, key=lambda i: (-counts[i], i))
    rows = [(i, beliefs.get(i, ""), Cell(counts[i], counts[i])) for i in ids]
    return section(
        T["misconceptions"](lang),
        figure(uri, T["misconceptions"](lang), T["no_misconception"](lang)),
        html_table((T["misconceptions"](lang), T["belief"](lang), T["learners"](lang)), rows),
        level=level,
    )


def _short(grade_id: str) -> str:
    """An exercise's column title: "ex4" for ex4_per_batch_grads_tests; other ids whole."""
    found = re.match(r"ex\d+(?=_)", grade_id)
    return found.group(0) if found else grade_id


def _points(value: float | None) -> Cell:
    return Cell("—", -1) if value is None else Cell(f"{value:g}", value)


def _feedback_links(work: Work, base: Path, lang: str) -> Markup | str:
    pages = [r.feedback for r in work.rows if r.feedback is not None]
    if not pages:
        return "—"
    return Markup(" ".join(link(os.path.relpath(p, base), T["open"](lang)) for p in pages))


def _late(work: Work, lang: str) -> Cell:
    seconds = max(r.seconds_late for r in work.rows)
    if seconds <= 0:
        return Cell("—", 0)
    penalty = sum(r.late_penalty for r in work.rows)
    shown = late.duration(seconds, lang) + (f" (−{penalty:g})" if penalty else "")
    return Cell(shown, seconds)


def _learners(works: list[Work], base: Path, lang: str, with_course: bool) -> Markup:
    exercise_ids = list(dict.fromkeys(e.grade_id for w in works for e in w.exercises))
    named = any(w.name for w in works)
    headers: list[object] = [T["learner"](lang)]
    headers += [T["name"](lang)] if named else []
    headers += [T["course"](lang)] if with_course else []
    headers += [T["total"](lang), T["max"](lang)]
    headers += [abbreviation(_short(g), g) for g in exercise_ids]
    headers += [T[k](lang) for k in ("misconceptions", "status", "late", "flags", "feedback")]
    rows = []
    for work in sorted(works, key=lambda w: w.student):
        points = {e.grade_id: e.score for e in work.exercises}
        row: list[object] = [work.student]
        row += [work.name] if named else []
        row += [work.rows[0].language] if with_course else []
        row += [_points(work.total), _points(work.max_score)]
        row += [_points(points.get(g)) for g in exercise_ids]
        row += [
            ", ".join(work.misconceptions) or "—",
            _status(work.status, lang),
            _late(work, lang),
            _joined((k for r in work.rows for k in r.flag_kinds_in(lang)), lang) or "—",
            _feedback_links(work, base, lang),
        ]
        rows.append(row)
    return section(
        T["learner_table"](lang),
        paragraph(T["sort_hint"](lang)),
        html_table(headers, rows, sortable=True, css="learners"),
    )


def _needs_attention(works: list[Work], refused: list[Row], lang: str) -> list[tuple]:
    """(kind, learner, lesson, what, detail) for every row the instructor should look at;
    ``kind`` is a key of ATTENTION_GROUP."""
    found = []
    for work in works:
        for row in work.rows:
            if row.status in ("error", NOT_GRADED):
                kind = "error" if row.status == "error" else "not_graded"
                found.append((kind, row, ATTENTION[kind](lang), row.reason_in(lang)))
            elif row.status in NOT_GRADED_IN_FULL:
                what = ATTENTION["submission"](lang)
                found.append(("submission", row, what, row.reason_in(lang)))
            if row.flags:
                detail = _joined(row.flag_details_in(lang), lang)
                found.append(("flagged", row, ATTENTION["flagged"](lang), detail))
            if row.pending_points:
                what = ATTENTION["pending"](lang).format(points=row.pending_points)
                pending = ", ".join(e.grade_id for e in row.exercises if e.pending)
                found.append(("pending", row, what, pending))
            if row.seconds_late > 0:
                how = late.duration(row.seconds_late, lang)
                what = ATTENTION["late"](lang).format(how=how, penalty=row.late_penalty)
                found.append(("late", row, what, str(row.timestamp or "")))
    for row in refused:
        found.append(("refused", row, ATTENTION["refused"](lang), row.reason_in(lang)))
    return [(kind, r.student, r.lesson, what, detail) for kind, r, what, detail in found]


def _attention_section(works: list[Work], refused: list[Row], lang: str) -> Markup:
    """One folding group per kind, the most urgent first, each titled with its count; a
    group open when short, so a class of 200 shows its counts before its rows."""
    found = _needs_attention(works, refused, lang)
    if not found:
        return section(
            T["attention"](lang), paragraph(T["nothing_needs"](lang)), anchor="attention"
        )
    headers = [T[k](lang) for k in ("learner", "lesson", "what", "detail")]
    groups = []
    for kind, title in ATTENTION_GROUP.items():
        rows = sorted((f[1:] for f in found if f[0] == kind), key=lambda f: (f[1], f[0]))
        if rows:
            summary = T["group_count"](lang).format(what=title(lang), n=len(rows))
            table = html_table(headers, rows, sortable=True)
            groups.append(folding(summary, table, open_=len(rows) <= OPEN_GROUP_ROWS))
    return section(T["attention"](lang), *groups, anchor="attention")


def _policy(course_roots: Sequence[Path], lang: str) -> Markup:
    return section(T["policy"](lang), paragraph(late.describe(course_roots[0], lang)))


# ---------------------------------------------------------------------------------------
# The term: every lesson, and what persists across lessons


def _lesson_overview(by_lesson: dict[str, list[Work]], lang: str) -> Markup:
    rows = []
    for lesson, works in by_lesson.items():
        scored = [w.total for w in works if w.total is not None]
        mean = sum(scored) / len(scored) if scored else None
        maximum = max((w.max_score for w in works), default=0.0)
        handed = sum(w.handed_in for w in works)
        rows.append(
            (lesson, Cell(handed, handed), _points(mean and round(mean, 2)), _points(maximum))
        )
    headers = [T[k](lang) for k in ("lesson", "submitted", "mean", "max")]
    return section(T["term_lessons"](lang), html_table(headers, rows, sortable=True))


def _across_lessons(works: list[Work], lessons: list[str], lang: str) -> Markup:
    per_id: dict[str, Counter] = {}
    for work in works:
        for i in work.misconceptions:
            per_id.setdefault(i, Counter())[work.lesson] += 1
    uri = report_figures.misconceptions_by_lesson(per_id, lessons, lang)
    grid = html_table(
        [T["misconceptions"](lang), *(lesson.split("_", 1)[0] for lesson in lessons)],
        [
            (i, *(Cell(per_id[i][lesson], per_id[i][lesson]) for lesson in lessons))
            for i in sorted(per_id)
        ],
        sortable=True,
    )
    where: dict[tuple[str, str], list[str]] = {}
    for work in works:
        for i in work.misconceptions:
            where.setdefault((work.student, i), []).append(work.lesson)
    repeated = sorted((s, i, ls) for (s, i), ls in where.items() if len(set(ls)) > 1)
    repeated_table = (
        html_table(
            [T[k](lang) for k in ("learner", "misconceptions", "lessons")],
            [(s, i, ", ".join(sorted(set(ls)))) for s, i, ls in repeated],
            sortable=True,
        )
        if repeated
        else paragraph(T["repeated_none"](lang))
    )
    return Markup(
        section(
            T["by_lesson"](lang),
            figure(uri, T["by_lesson"](lang), T["no_misconception"](lang)),
            grid if per_id else "",
        )
        + section(T["repeated"](lang), repeated_table)
    )


def _term_learners(by_lesson: dict[str, list[Work]], base: Path, lang: str) -> Markup:
    lessons = list(by_lesson)
    table: dict[str, dict[str, Work]] = {}
    for lesson, works in by_lesson.items():
        for work in works:
            table.setdefault(work.student, {})[lesson] = work
    named = any(w.name for works in by_lesson.values() for w in works)
    rows = []
    for student in sorted(table):
        mine = table[student]
        totals = [w.total for w in mine.values() if w.total is not None]
        any_work = next(iter(mine.values()))
        row: list[object] = [student]
        row += [any_work.name] if named else []
        row.append(any_work.rows[0].language)
        row += [_points(mine[lesson].total if lesson in mine else None) for lesson in lessons]
        row.append(_points(sum(totals) if totals else None))
        links = [
            link(os.path.relpath(r.feedback, base), lesson.split("_", 1)[0])
            for lesson in lessons
            if lesson in mine
            for r in mine[lesson].rows
            if r.feedback is not None
        ]
        row.append(Markup(" ".join(links)) if links else "—")
        rows.append(row)
    headers = [T[k](lang) for k in ("learner", *(("name",) if named else ()), "course")]
    headers += [lesson.split("_", 1)[0] for lesson in lessons]
    headers += [T["total"](lang), T["feedback"](lang)]
    return section(
        T["learner_table"](lang),
        paragraph(T["sort_hint"](lang)),
        html_table(headers, rows, sortable=True, css="learners"),
    )


# ---------------------------------------------------------------------------------------
# Writing


def lesson_page(rows: Sequence[Row], lesson: str, base: Path, lang: str) -> str:
    """The report of one lesson as HTML; feedback links relative to ``base``."""
    works, refused = _works(rows)
    roots = list(dict.fromkeys(r.course_root for r in rows))
    body = [
        _attention_section(works, refused, lang),
        _status_section(works, refused, lang),
        _histogram(lesson, works, lang),
        _exercises(works, lang),
        _misconceptions(works, lang),
        _learners(works, base, lang, with_course=len(roots) > 1),
    ]
    if roots:
        body.append(_policy(roots, lang))
    return page(T["title"](lang).format(a=lesson), lang, body)


def term_page(rows: Sequence[Row], base: Path, lang: str) -> str:
    """The report of every lesson of the term as HTML; feedback links relative to ``base``."""
    works, refused = _works(rows)
    lessons = sorted({w.lesson for w in works})
    started = [
        lesson for lesson in lessons if any(w.handed_in for w in works if w.lesson == lesson)
    ]
    waiting = [lesson for lesson in lessons if lesson not in started]
    by_lesson = {lesson: [w for w in works if w.lesson == lesson] for lesson in started}
    active = [w for w in works if w.lesson in by_lesson]
    body: list[object] = [_attention_section(active, refused, lang)]
    if not started:
        body.append(paragraph(T["no_lesson"](lang)))
    else:
        body += [
            _lesson_overview(by_lesson, lang),
            _term_learners(by_lesson, base, lang),
            _across_lessons(active, started, lang),
        ]
    if waiting:
        body.append(paragraph(T["waiting"](lang).format(names=", ".join(waiting))))
    for lesson, lesson_works in by_lesson.items():
        heading = T["lesson_n"](lang).format(n=lesson.split("_", 1)[0], name=lesson)
        body += [
            Markup(f'<h2 class="lesson" id="{html.escape(lesson)}">{html.escape(heading)}</h2>'),
            _histogram(lesson, lesson_works, lang, level=3),
            _exercises(lesson_works, lang, level=3),
            _misconceptions(lesson_works, lang, level=3),
        ]
    roots = list(dict.fromkeys(r.course_root for r in rows))
    if roots:
        body.append(_policy(roots, lang))
    return page(T["term_title"](lang), lang, body)


def write(
    course_root: Path,
    assignment: str | None,
    target: Path | None = None,
    *,
    with_courses: Sequence[Path] = (),
    lang: str | None = None,
) -> Path:
    """Write the report of one assignment, or of the term (``assignment`` None), of the
    course and any other-language courses given; return its path.

    By default it is ``grading/<assignment or term>-report.html`` in the course's own
    language, ``…-report-<lang>.html`` in the other, so neither replaces the other."""
    roots = [course_root.resolve(), *(c.resolve() for c in with_courses)]
    own = course.language(roots[0])
    lang = lang or own
    name = assignment or "term"
    suffix = "" if lang == own else f"-{lang}"
    target = target or roots[0] / "grading" / f"{name}-report{suffix}.html"
    target = target.resolve()
    if assignment is None:
        text = term_page(gradebook_rows.term_rows(roots), target.parent, lang)
    else:
        rows = [r for root in roots for r in gradebook_rows.lesson_rows(root, assignment)]
        text = lesson_page(rows, assignment, target.parent, lang)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target
