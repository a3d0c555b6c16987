"""The class report: score distribution per exercise, misconceptions hit, integrity flags.

One self-contained HTML file (figures embedded as PNG) in the course language,
so an instructor sees at a glance which beliefs the class holds.
"""

from __future__ import annotations

import base64
import html
import io
from collections import Counter
from pathlib import Path

from autograder import course
from autograder.common.i18n import Text
from autograder.common.misconceptions import CATALOGUE
from autograder.grader import records

T = {
    "title": Text("Class report — {a}", "班级报告 —— {a}"),
    "scores": Text("Scores per exercise", "各练习得分"),
    "learners": Text("learners", "学生人数"),
    "full": Text("full marks", "满分"),
    "partial": Text("partial", "部分得分"),
    "zero": Text("no marks", "零分"),
    "misconceptions": Text("Misconceptions hit", "命中的常见误区"),
    "hit_by": Text("learners whose feedback names it", "反馈中出现该误区的学生数"),
    "status": Text("Grading status", "评分状态"),
    "flags": Text("Integrity flags", "诚信标记"),
    "none": Text("none", "无"),
    "student": Text("learner", "学生"),
    "what": Text("what", "内容"),
    "no_misconception": Text("No misconception was found.", "没有发现常见误区。"),
    "attention": Text(
        "Needs attention: submissions refused at collect", "需要处理：收取时被拒的提交"
    ),
    "refused_why": Text(
        "Each claims to be a learner's submission but another account made it; it was not "
        "collected, and the learner's own submission stands.",
        "这些提交自称属于某位学生，却是由另一个账户提交的；它们未被收取，该学生本人的提交不受影响。",
    ),
    "claims": Text("claims to be", "声称属于"),
    "made_by": Text("made by", "实际提交者"),
    "when": Text("submitted at", "提交时间"),
}


def refused_at_collect(course_root: Path, assignment: str) -> list[dict]:
    """The submissions collect refused (autograder/classroom/owned.py lists them)."""
    import json

    listed = course_root / "grading" / "refused" / f"{assignment}.json"
    try:
        found = json.loads(listed.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []


def _refused_html(course_root: Path, assignment: str, lang: str) -> str:
    refused = refused_at_collect(course_root, assignment)
    if not refused:
        return ""
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{html.escape(str(item.get(key, '')))}</td>"
            for key in ("username", "owner", "timestamp")
        )
        + "</tr>"
        for item in refused
    )
    head = "".join(f"<th>{T[key](lang)}</th>" for key in ("claims", "made_by", "when"))
    return (
        f'<h2 class="attention">{T["attention"](lang)}</h2><p>{T["refused_why"](lang)}</p>'
        f"<table><tr>{head}</tr>{rows}</table>"
    )


def _figure_png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _test_scores(course_root: Path, assignment: str) -> dict[str, list[tuple[float, float]]]:
    from nbgrader.api import Gradebook

    per_cell: dict[str, list[tuple[float, float]]] = {}
    with Gradebook(course.gradebook_url(course_root)) as gradebook:
        for submission in gradebook.assignment_submissions(assignment):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.cell_type == "code":
                        per_cell.setdefault(grade.name, []).append(
                            (grade.score or 0.0, grade.max_score)
                        )
    return dict(sorted(per_cell.items()))


def misconception_counts(course_root: Path, assignment: str) -> Counter:
    """How many learners each misconception ID was found in, by the grader's own verdicts.

    Only the judge's verdicts count (saved in the grading records): text printed in a
    notebook, which learner code can write, never does.
    """
    per_learner: dict[str, set[str]] = {}
    for record in records.load(course_root, assignment):
        found = per_learner.setdefault(record.student, set())
        for verdict in record.verdicts.values():
            found.update(i for i in verdict.get("misconceptions", []) if i in CATALOGUE)
    return Counter(i for ids in per_learner.values() for i in ids)


def write(course_root: Path, assignment: str, target: Path | None = None) -> Path:
    """Write the report for one assignment and return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from autograder.kernel.fonts import use_cjk_font

    use_cjk_font()
    lang = course.language(course_root)
    target = target or course_root / "grading" / f"{assignment}-report.html"
    scores = _test_scores(course_root, assignment)
    counts = misconception_counts(course_root, assignment)
    found = records.load(course_root, assignment)

    fig, ax = plt.subplots(figsize=(7, 0.45 * max(len(scores), 3) + 1))
    names = list(scores)
    full = [sum(s == m for s, m in scores[n]) for n in names]
    zero = [sum(s == 0 for s, _ in scores[n]) for n in names]
    partial = [len(scores[n]) - f - z for n, f, z in zip(names, full, zero, strict=True)]
    ax.barh(names, full, color="#2f9e44", label=T["full"](lang))
    ax.barh(names, partial, left=full, color="#f08c00", label=T["partial"](lang))
    ax.barh(
        names,
        zero,
        left=[f + p for f, p in zip(full, partial, strict=True)],
        color="#e03131",
        label=T["zero"](lang),
    )
    ax.set_xlabel(T["learners"](lang))
    ax.invert_yaxis()
    ax.legend(loc="lower right")
    ax.set_title(T["scores"](lang))
    scores_png = _figure_png(fig)
    plt.close(fig)

    ids = sorted(counts, key=lambda i: (-counts[i], i))
    ids_figure = f"<p>{T['no_misconception'](lang)}</p>"  # no empty axes
    if ids:
        fig, ax = plt.subplots(figsize=(7, 0.45 * max(len(ids), 3) + 1))
        labels = [f"{i}: {CATALOGUE[i].belief(lang)[:48]}" if i in CATALOGUE else i for i in ids]
        ax.barh(labels, [counts[i] for i in ids], color="#1971c2")
        ax.set_xlabel(T["hit_by"](lang))
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.invert_yaxis()
        ax.set_title(T["misconceptions"](lang))
        ids_figure = f'<img alt="misconceptions" src="data:image/png;base64,{_figure_png(fig)}">'
        plt.close(fig)

    id_rows = "".join(
        f"<tr><td>{i}</td><td>{html.escape(CATALOGUE[i].belief(lang) if i in CATALOGUE else '')}"
        f"</td><td>{counts[i]}</td></tr>"
        for i in ids
    )
    status_counts = Counter(r.status for r in found)
    flag_rows = [
        f"<tr><td>{html.escape(r.student)}</td><td>{html.escape(f['kind'])}</td>"
        f"<td>{html.escape(f['cell'])}: {html.escape(f['detail'])}</td></tr>"
        for r in found
        for f in r.flags
    ]
    status_rows = "".join(
        f"<tr><td>{html.escape(s)}</td><td>{n}</td></tr>" for s, n in sorted(status_counts.items())
    )
    flags_html = (
        "<table><tr><th>{}</th><th>{}</th><th>{}</th></tr>{}</table>".format(
            T["student"](lang), T["flags"](lang), T["what"](lang), "".join(flag_rows)
        )
        if flag_rows
        else f"<p>{T['none'](lang)}</p>"
    )
    page = f"""<!DOCTYPE html>
<html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8">
<title>{html.escape(T["title"](lang).format(a=assignment))}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}
img{{max-width:100%}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.2em .6em}}</style>
</head><body>
<h1>{html.escape(T["title"](lang).format(a=assignment))}</h1>
{_refused_html(course_root, assignment, lang)}
<h2>{T["status"](lang)}</h2><table>{status_rows}</table>
<h2>{T["scores"](lang)}</h2><img alt="scores" src="data:image/png;base64,{scores_png}">
<h2>{T["misconceptions"](lang)}</h2>{ids_figure}
<table>{id_rows}</table>
<h2>{T["flags"](lang)}</h2>{flags_html}
</body></html>
"""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return target
