"""The class report's figures: matplotlib drawn into PNG data URIs.

Each function takes the numbers the report's tables show too, so that a figure never
says what its table does not; each returns ``None`` when there is nothing to draw, and
the report writes a sentence there instead of an empty axis.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from autograder.common.i18n import Text

PER_POINT_UP_TO = 20  # a score range this wide gets one bin per point; wider, BINS bins
BINS = 10
LABEL_CHARS = 48  # a misconception's belief is cut to this many characters in a label

T = {
    "histogram": Text("Total scores", "总分分布"),
    "score": Text("points", "得分"),
    "learners": Text("learners", "学生人数"),
    "difficulty": Text("Points earned per exercise", "各练习得分率"),
    "mean": Text("mean points / max (%)", "平均得分 / 满分（%）"),
    "full": Text("full marks (% of learners)", "得满分的学生（%）"),
    "misconceptions": Text("Misconceptions hit", "命中的常见误区"),
    "hit_by": Text("learners whose feedback names it", "反馈中出现该误区的学生数"),
    "by_lesson": Text("Misconceptions per lesson", "各课命中的常见误区"),
}


@dataclass(frozen=True)
class Bin:
    """Learners whose total lies in [low, high); the top bin holds the full score alone."""

    low: float
    high: float
    count: int

    def label(self) -> str:
        if self.low == self.high or (self.high - self.low == 1 and float(self.low).is_integer()):
            return f"{self.low:g}"
        return f"{self.low:g}–{self.high:g}"


def histogram(totals: Sequence[float], max_score: float) -> list[Bin]:
    """Count totals over [0, max_score]: bins one point wide up to ``PER_POINT_UP_TO`` points,
    else ``BINS`` equal bins; full marks get a bin of their own."""
    if max_score <= 0:
        return []
    width = 1.0 if max_score <= PER_POINT_UP_TO else max_score / BINS
    count = math.ceil(round(max_score / width, 6))
    clamped = [min(max(t, 0.0), max_score) for t in totals]
    bins = []
    for i in range(count):
        low, high = round(i * width, 6), round(min((i + 1) * width, max_score), 6)
        bins.append(Bin(low, high, sum(low <= t < high for t in clamped)))
    bins.append(Bin(max_score, max_score, sum(t == max_score for t in clamped)))
    return bins


def _pyplot():
    """matplotlib's pyplot, drawing off screen with the Chinese font registered."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from autograder.kernel.fonts import use_cjk_font

    use_cjk_font()
    return plt


def _data_uri(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _tall(rows: int) -> tuple[float, float]:
    return (7, 0.4 * max(rows, 3) + 1.2)


def score_histogram(bins: Sequence[Bin], lang: str) -> str | None:
    """Bars of learners per total score; None when no learner has a total."""
    if not any(b.count for b in bins):
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.bar(range(len(bins)), [b.count for b in bins], color="#1971c2")
    ax.set_xticks(range(len(bins)), [b.label() for b in bins])
    ax.set_xlabel(T["score"](lang))
    ax.set_ylabel(T["learners"](lang))
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(T["histogram"](lang))
    uri = _data_uri(fig)
    plt.close(fig)
    return uri


def difficulty(rows: Sequence[tuple[str, float, float]], lang: str) -> str | None:
    """Per exercise (name, mean share of points, share of full marks), both in [0, 1]:
    paired bars; None when no exercise was scored."""
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_tall(len(rows)))
    places = range(len(rows))
    ax.barh(
        [p - 0.2 for p in places],
        [100 * r[1] for r in rows],
        0.4,
        color="#2f9e44",
        label=T["mean"](lang),
    )
    ax.barh(
        [p + 0.2 for p in places],
        [100 * r[2] for r in rows],
        0.4,
        color="#74c0fc",
        label=T["full"](lang),
    )
    ax.set_yticks(list(places), [r[0] for r in rows])
    ax.set_xlim(0, 100)
    ax.invert_yaxis()
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title(T["difficulty"](lang))
    uri = _data_uri(fig)
    plt.close(fig)
    return uri


def misconception_bars(
    counts: Mapping[str, int], beliefs: Mapping[str, str], lang: str
) -> str | None:
    """Learners per misconception ID, most common first; None when none was hit."""
    ids = sorted((i for i in counts if counts[i]), key=lambda i: (-counts[i], i))
    if not ids:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=_tall(len(ids)))
    labels = [f"{i}: {beliefs.get(i, '')[:LABEL_CHARS]}".rstrip(": ") for i in ids]
    ax.barh(labels, [counts[i] for i in ids], color="#1971c2")
    ax.set_xlabel(T["hit_by"](lang))
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.invert_yaxis()
    ax.set_title(T["misconceptions"](lang))
    uri = _data_uri(fig)
    plt.close(fig)
    return uri


def misconceptions_by_lesson(
    counts: Mapping[str, Mapping[str, int]], lessons: Sequence[str], lang: str
) -> str | None:
    """A grid of learners per misconception ID (rows) and lesson (columns), each cell
    written with its number; None when no lesson hit any."""
    ids = sorted(i for i, per in counts.items() if any(per.get(lesson) for lesson in lessons))
    if not ids or not lessons:
        return None
    plt = _pyplot()
    grid = [[counts[i].get(lesson, 0) for lesson in lessons] for i in ids]
    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(lessons) + 2), 0.4 * len(ids) + 1.5))
    ax.imshow(grid, cmap="Blues", aspect="auto", vmin=0)
    ax.set_xticks(range(len(lessons)), [lesson.split("_", 1)[0] for lesson in lessons])
    ax.set_yticks(range(len(ids)), ids)
    top = max(max(row) for row in grid)
    for y, row in enumerate(grid):
        for x, n in enumerate(row):
            if n:
                ax.text(
                    x,
                    y,
                    str(n),
                    ha="center",
                    va="center",
                    color="white" if n > top / 2 else "black",
                )
    ax.set_title(T["by_lesson"](lang))
    uri = _data_uri(fig)
    plt.close(fig)
    return uri
