"""`course-grade report` on a small graded class: every learner, the right counts, both languages.

Five learners of the English course hand in lessons 01 and 02, graded by `course-grade grade`:
alice answers one exercise of each lesson with a catalogued wrong answer naming RG-4 (the same
misconception in two lessons) and hands lesson 01 in late; bob is right in lesson 01 with a
written answer waiting for its hand grade, and hands in lesson 02 blank; carol is flagged in
lesson 01; erin's lesson 01 is a corrupt file; frank answers two exercises. A submission in
bob's name was refused at collect, made by an account whose name is markup; gina, of the
Chinese course, whose name is markup too, handed in lesson 01 but it is not graded yet. The
reports must name every learner, count the histogram as the gradebook does, draw no empty
figure, escape learner-provided text, speak only Chinese in the Chinese report, and render
in Chromium.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import math
import os
import shutil
from collections import Counter
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from conftest import REPO
from language_lint import english_words
from nbgrader_course import submission, submit
from test_course_grade import course_grade
from test_export import nbgrader

from autograder import course
from autograder.grader import demo
from autograder.grader.pipeline import records
from autograder.grader.reports import gradebook_rows, report, report_figures

pytestmark = pytest.mark.notebooks
L1, L2 = "01_requires_grad", "02_no_grad"
DUE = "2026-01-10 12:00:00 UTC"
LATE = "2026-01-11 06:00:00.000000 UTC"  # 18 hours late
HOSTILE = "<script>alert('owner')</script>"
HOSTILE_NAME = "<b>Gina</b>"
ARTIFACTS = REPO / "test-artifacts" / "report"
CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))


def _answers(root: Path, lesson: str) -> tuple[dict[str, str], nbformat.NotebookNode]:
    source = nbformat.read(str(root / "source" / lesson / f"{lesson}.ipynb"), as_version=4)
    solutions = {
        gid: cell.source
        for gid, cell in demo._cells(source).items()
        if cell.metadata["nbgrader"].get("solution") and cell.cell_type == "code"
    }
    return solutions, root / "release" / lesson / f"{lesson}.ipynb"


def _rg4(lesson: str) -> tuple[str, str]:
    """The exercise and code of a catalogued wrong answer of ``lesson`` naming RG-4."""
    for grade_id, by_id in demo._catalogue(lesson).items():
        if "RG-4" in by_id:
            return grade_id, by_id["RG-4"]
    raise AssertionError(f"{lesson}'s catalogue has no RG-4 answer")


@pytest.fixture(scope="module")
def graded(tmp_path_factory, make_course):
    base = tmp_path_factory.mktemp("report")
    en, zh = make_course(base / "en"), make_course(base / "zh", "zh")
    nbgrader(en, "db", "assignment", "add", L1, f"--duedate={DUE}")
    nbgrader(zh, "db", "student", "add", "gina", f"--first-name={HOSTILE_NAME}")
    s1, learner1 = _answers(en, L1)
    s2, learner2 = _answers(en, L2)
    exercises1 = list(s1)
    handed = {
        ("alice", L1): submission(learner1, {**s1, _rg4(L1)[0]: _rg4(L1)[1]}),
        ("alice", L2): submission(learner2, {**s2, _rg4(L2)[0]: _rg4(L2)[1]}),
        ("bob", L1): submission(learner1, {**s1, "written_rg2": "Because it is not a leaf."}),
        ("bob", L2): submission(learner2, {}),
        ("carol", L1): demo._insert_after_setup(
            submission(learner1, s1), "torch.allclose = lambda *a, **k: True"
        ),
        ("frank", L1): submission(learner1, {g: s1[g] for g in exercises1[:2]}),
    }
    for (student, lesson), nb in handed.items():
        path = submit(en, student, lesson, nb)
        if (student, lesson) == ("alice", L1):
            (path.parent / "timestamp.txt").write_text(LATE, encoding="utf-8")
    corrupt = en / "submitted" / "erin" / L1 / f"{L1}.ipynb"
    corrupt.parent.mkdir(parents=True)
    corrupt.write_text('{"cells": [', encoding="utf-8")
    submit(zh, "gina", L1, submission(learner1, s1))  # handed in, not graded yet
    refused = en / "grading" / "refused"
    refused.mkdir(parents=True)
    claim = {"username": "bob", "owner": HOSTILE, "timestamp": "2026-01-10 10:00:00+00:00"}
    (refused / f"{L1}.json").write_text(json.dumps([claim]), encoding="utf-8")
    limits = ("--cell-timeout", "30", "--workers", "2")
    result = course_grade("grade", str(en), L1, L2, *limits)
    assert result.returncode == 0, result.stderr[-3000:]
    written = course_grade("feedback", str(en), L1, "--student", "alice")
    assert written.returncode == 0, written.stderr[-3000:]
    pages = {}
    for lang in ("en", "zh"):
        for name, args in {
            "lesson": (L1,),
            "term": ("--term", "--with-course", str(zh)),
        }.items():
            target = base / f"{name}-{lang}.html"
            made = course_grade("report", str(en), *args, "--lang", lang, "--output", str(target))
            assert made.returncode == 0, made.stderr[-3000:]
            pages[name, lang] = target
    return en, zh, pages


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _learners(path: Path) -> list[str]:
    table = _soup(path).find("table", class_="learners")
    return [row.find("td").get_text() for row in table.tbody.find_all("tr")]


def _gradebook_totals(root: Path, lesson: str) -> dict[str, float]:
    """Each learner's points from nbgrader's gradebook: score less the late penalty, for
    every graded submission (a file nbgrader could not read has no score)."""
    from nbgrader.api import Gradebook

    status = {r.student: r.status for r in records.load(root, lesson)}
    totals = {}
    with Gradebook(course.gradebook_url(root)) as gradebook:
        for handed_in in gradebook.assignment_submissions(lesson):
            notebooks = [n for n in handed_in.notebooks if n.grades]
            if notebooks and status.get(handed_in.student_id) != "rejected":
                totals[handed_in.student_id] = sum(
                    n.score - (n.late_submission_penalty or 0) for n in notebooks
                )
    return totals


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_learner_is_in_the_lesson_and_the_term_report(graded, lang):
    en, zh, pages = graded
    handed_in = {p.name for p in (en / "submitted").iterdir()}
    assert sorted(_learners(pages["lesson", lang])) == sorted(handed_in)
    assert sorted(_learners(pages["term", lang])) == sorted(handed_in | {"gina"})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_histogram_counts_what_the_gradebook_holds(graded, lang):
    en, _, pages = graded
    totals = _gradebook_totals(en, L1)
    assert set(totals) == {"alice", "bob", "carol", "frank"}  # erin's file was not read
    table = _soup(pages["lesson", lang]).find("table", class_=f"histogram-{L1}")
    labels = [th.get_text() for th in table.thead.find_all("th")][1:]
    counts = [int(td.get_text()) for td in table.tbody.find_all("td")[1:]]
    shown = dict(zip(labels, counts, strict=True))
    want = Counter(f"{math.floor(t):g}" for t in totals.values())
    assert {k: v for k, v in shown.items() if v} == dict(want)
    assert sum(counts) == len(totals)
    term = _soup(pages["term", lang]).find("table", class_=f"histogram-{L1}")
    assert [int(td.get_text()) for td in term.tbody.find_all("td")[1:]] == counts


@pytest.mark.parametrize("name", ["lesson", "term"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_figure_is_empty(graded, name, lang):
    import matplotlib.image

    images = _soup(graded[2][name, lang]).find_all("img")
    assert len(images) >= (3 if name == "lesson" else 5)
    for image in images:
        assert image["src"].startswith("data:image/png;base64,")
        pixels = matplotlib.image.imread(io.BytesIO(base64.b64decode(image["src"].split(",")[1])))
        assert pixels.std() > 0.01, image["alt"]  # something is drawn on it


def test_a_lesson_with_nothing_to_draw_says_so_instead(graded):
    _, zh, _ = graded
    made = course_grade("report", str(zh), L1)  # gina's is not graded: no score, no verdict
    assert made.returncode == 0, made.stderr[-3000:]
    soup = _soup(zh / "grading" / f"{L1}-report.html")
    assert soup.find("img") is None
    text = soup.get_text()
    assert "还没有学生得到分数" in text and "没有发现常见误区" in text
    assert "尚未评分" in text  # gina needs attention: her submission waits for `grade`


def _labels(path: Path) -> str:
    """The report's own words: everything but the data cells (learner ids, reasons), the
    script and the style; image descriptions included."""
    soup = _soup(path)
    for tag in soup.find_all(["td", "script", "style"]):
        tag.decompose()
    alts = " ".join(img.get("alt", "") for img in soup.find_all("img"))
    return soup.get_text(" ") + " " + alts


def test_the_chinese_report_has_no_english_labels(graded):
    en, _, pages = graded
    known = {L1, L2, "RG-4"} | {p.name for p in (en / "submitted").iterdir()}
    for name in ("lesson", "term"):
        assert english_words(_labels(pages[name, "zh"]), known) == [], name
        assert "学期报告" in _labels(pages["term", "zh"])


def test_learner_provided_text_is_escaped(graded):
    _, _, pages = graded
    for page in pages.values():
        text = page.read_text(encoding="utf-8")
        assert "<script>alert" not in text and "<b>Gina" not in text
    assert HOSTILE in _soup(pages["lesson", "en"]).get_text()  # shown, as text
    assert HOSTILE_NAME in _soup(pages["term", "en"]).get_text()


def test_needs_attention_names_each_case(graded):
    _, _, pages = graded
    for lang, words in {
        "en": (
            "late by 18 h",
            "hand grading pending",
            "integrity flag",
            "could not be graded",
            "refused at collect",
            "not graded yet",
        ),
        "zh": ("迟交 18 小时", "待人工评分", "诚信标记", "未能完整评分", "收取时被拒", "尚未评分"),
    }.items():
        table = _soup(pages["term", lang]).find(id="attention").find_parent("section")
        rows = {
            (tr.find_all("td")[0].get_text(), tr.find_all("td")[2].get_text())
            for tr in table.find_all("tr")
            if tr.find("td")
        }
        who = {what: student for student, what in rows}
        found = {w: next(s for what, s in who.items() if w in what) for w in words}
        assert list(found.values()) == ["alice", "bob", "carol", "erin", "bob", "gina"], found


def test_needs_attention_is_grouped_by_kind_with_counts(graded, monkeypatch, tmp_path):
    """Each kind folds under a title that counts its rows, the most urgent first; a long
    group starts folded (a class of 200 has hundreds of late rows), a short one open."""
    en, zh, pages = graded
    attention = _soup(pages["term", "en"]).find(id="attention").find_parent("section")
    groups = attention.find_all("details")
    titles = [g.summary.get_text() for g in groups]
    assert titles == [
        "Not graded yet: 1",
        "Not graded in full: 1",
        "Refused at collect: 1",
        "Integrity flags: 1",
        "Hand grading pending: 1",
        "Late: 1",
    ], titles
    assert all(g.has_attr("open") for g in groups)
    for group in groups:
        rows = [tr for tr in group.find_all("tr") if tr.find("td")]
        assert f": {len(rows)}" in group.summary.get_text()
    zh_titles = [
        g.summary.get_text()
        for g in _soup(pages["term", "zh"]).find(id="attention").find_parent("section")("details")
    ]
    assert zh_titles[0] == "尚未评分：1 项" and zh_titles[-1] == "迟交：1 项", zh_titles
    monkeypatch.setattr(report, "OPEN_GROUP_ROWS", 0)
    folded = _soup(report.write(en, None, tmp_path / "folded.html", with_courses=[zh], lang="en"))
    assert not any(g.has_attr("open") for g in folded.find_all("details"))


def test_the_term_view_finds_a_misconception_across_lessons(graded):
    _, _, pages = graded
    soup = _soup(pages["term", "en"])
    repeated = [
        [td.get_text() for td in tr.find_all("td")]
        for table in soup.find_all("table")
        for tr in table.find_all("tr")
        if len(tr.find_all("td")) == 3 and tr.find_all("td")[1].get_text() == "RG-4"
    ]
    assert ["alice", "RG-4", f"{L1}, {L2}"] in repeated


def test_the_learner_table_links_each_feedback_page(graded):
    en, _, pages = graded
    for page in (pages["lesson", "en"], pages["term", "zh"]):
        links = _soup(page).find("table", class_="learners").find_all("a")
        assert links, page.name
        for anchor in links:
            assert (page.parent / anchor["href"]).resolve().is_file(), anchor["href"]
    assert (en / "feedback" / "alice" / L1 / f"{L1}.html").is_file()


def test_report_needs_one_lesson_or_the_term(graded):
    en, _, _ = graded
    assert course_grade("report", str(en)).returncode == 2
    assert course_grade("report", str(en), L1, "--term").returncode == 2


# ---------------------------------------------------------------------------------------


def test_histogram_bins_cover_the_range_with_full_marks_alone():
    bins = report_figures.histogram([0, 1.5, 3, 3, 4], 4)
    assert [(b.label(), b.count) for b in bins] == [
        ("0", 1),
        ("1", 1),
        ("2", 0),
        ("3", 2),
        ("4", 1),
    ]
    wide = report_figures.histogram([0, 49, 99.5, 100], 100)
    assert len(wide) == 11 and sum(b.count for b in wide) == 4 and wide[-1].count == 1


def test_figures_with_nothing_to_show_are_not_drawn():
    empty = report_figures.histogram([], 4)
    assert report_figures.score_histogram(empty, "zh") is None
    assert report_figures.difficulty([], "en") is None
    assert report_figures.misconception_bars({"RG-1": 0}, {}, "en") is None
    assert report_figures.misconceptions_by_lesson({"RG-1": {L1: 0}}, [L1], "zh") is None


# ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def _screenshot_on_failure(page, name: str):
    try:
        yield
    except BaseException:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(Exception):
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        raise


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_term_report_renders_in_chromium(graded, lang, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    copy = tmp_path / "report.html"  # opened offline from a folder of its own: no asset
    shutil.copyfile(graded[2]["term", lang], copy)
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        requests = []
        page.on("request", lambda r: requests.append(r.url))
        try:
            with _screenshot_on_failure(page, f"term-{lang}"):
                page.goto(copy.as_uri())
                assert page.title() == ("Term report" if lang == "en" else "学期报告")
                widths = page.eval_on_selector_all("img", "all => all.map(i => i.naturalWidth)")
                assert widths and all(w > 100 for w in widths), widths
                assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
                table = page.locator("table.learners")
                first = table.locator("tbody tr td:first-child")
                learners = first.all_inner_texts()
                assert learners == sorted(learners)
                table.locator("th").first.click()  # the inline script sorts on a click
                table.locator("th").first.click()
                assert first.all_inner_texts() == sorted(learners, reverse=True)
        finally:
            browser.close()


@pytest.mark.parametrize(
    ("first", "last", "shown"),
    [
        ("婷", "李", "李婷"),
        ("Emma", "Jones", "Emma Jones"),
        ("Jun", "王", "Jun 王"),
        ("", "李", "李"),
    ],
)
def test_a_chinese_name_is_written_family_name_first(first, last, shown):
    row = gradebook_rows.Row(
        *(Path("."), "zh", L1, L1, "learner1", first, last, "", "", "graded", "", ()),
        *(1.0, 1.0, 0.0, 0.0, None, 0.0, (), None),
    )
    assert report.Work("learner1", L1, (row,)).name == shown
