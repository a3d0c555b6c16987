"""The lesson notebooks: bilingual sources, up-to-date learner versions, required content."""

from __future__ import annotations

import importlib
import json
import re

import nbformat
import pytest
from conftest import NOTEBOOKS, REPO, SOLUTIONS

from autograder import bilingual, course
from autograder.common.i18n import LANGUAGES
from autograder.common.misconceptions import CATALOGUE
from autograder.starter import starter_source

SOURCES = course.lesson_sources(SOLUTIONS)
LESSONS = [s.parent.name for s in SOURCES]
CJK = re.compile(r"[\u4e00-\u9fff]")


def _nbgrader(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def _learner(lang: str, lesson: str):
    return bilingual.read(NOTEBOOKS / lang / f"{lesson}.ipynb")


@pytest.mark.parametrize("source", SOURCES, ids=LESSONS)
def test_every_prose_cell_has_both_languages(source):
    assert bilingual.pairing_problems(bilingual.read(source)) == []


@pytest.mark.parametrize("source", SOURCES, ids=LESSONS)
def test_sources_are_committed_without_outputs(source):
    for cell in bilingual.read(source).cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.id


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_learner_notebook_is_in_its_own_language(lesson):
    for lang in LANGUAGES:
        for cell in _learner(lang, lesson).cells:
            if cell.cell_type != "markdown" or bilingual.is_graded(cell):
                continue
            has_chinese = bool(CJK.search(cell.source))
            assert has_chinese == (lang == "zh"), (lang, cell.id, cell.source[:80])


@pytest.mark.parametrize("lesson", LESSONS)
def test_graded_cells_are_identical_across_languages(lesson):
    """Same graded cells in both languages; only the stub a learner fills in is translated."""

    sources = {
        _nbgrader(c)["grade_id"]: c
        for c in bilingual.read(SOLUTIONS / lesson / f"{lesson}.ipynb").cells
        if bilingual.is_graded(c)
    }

    def graded(lang):
        # nbgrader indents the code stub to the solution's level, so match its comment line.
        stubs = {
            "code": course.CODE_STUBS[lang].splitlines()[0],
            "markdown": course.TEXT_STUBS[lang],
        }
        cells = []
        for cell in _learner(lang, lesson).cells:
            if not bilingual.is_graded(cell):
                continue
            meta = dict(_nbgrader(cell))
            source = cell.source
            starter = starter_source(sources[meta["grade_id"]], lang)
            if meta.get("solution") and starter is not None:
                # the capstone: the learner starts from the cell's starter code, in its language
                assert source == starter, (lang, cell.id, source[:80])
                source = "<starter>"
                meta.pop("checksum", None)  # computed over the translated starter
            elif meta.get("solution"):
                assert stubs[cell.cell_type] in source, (lang, cell.id, source[:80])
                source = source.replace(stubs[cell.cell_type], "<stub>")
                meta.pop("checksum", None)  # computed over the translated stub
            cells.append((cell.id, cell.cell_type, source, meta))
        return cells

    assert graded("en") == graded("zh")
    assert graded("en"), "no graded cells"


@pytest.mark.parametrize("lesson", LESSONS)
def test_learner_notebooks_hold_no_solutions_or_hidden_tests(lesson):
    for lang in LANGUAGES:
        text = (NOTEBOOKS / lang / f"{lesson}.ipynb").read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_run_all_goes_past_every_test_cell(lang):
    """An unanswered exercise's test raises; the tag keeps Run All going to the self-check."""
    notebooks = sorted((NOTEBOOKS / lang).glob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        tests = [c for c in bilingual.read(path).cells if course.is_test_cell(c)]
        assert tests, f"{path.name} has no test cells"
        for cell in tests:
            assert "raises-exception" in cell.metadata.get("tags", []), (path.name, cell.id)


def test_learner_notebooks_are_up_to_date(tmp_path, make_course):
    """Fails when someone edits solutions/ and forgets `make build`.

    `make build` copies each course's release/ (nbgrader's generate_assignment)
    into notebooks/<lang>/; the courses built once for this test run hold it.
    """
    for lang in LANGUAGES:
        release = make_course(tmp_path / lang, lang) / "release"
        built = {p.name: p for p in release.glob("*/*.ipynb")}
        committed = sorted(p.name for p in (NOTEBOOKS / lang).glob("*.ipynb"))
        assert sorted(built) == committed, f"notebooks/{lang} has other lessons than solutions/"
        for name, path in built.items():
            fresh = json.loads(path.read_text(encoding="utf-8"))
            current = json.loads((NOTEBOOKS / lang / name).read_text(encoding="utf-8"))
            assert fresh == current, f"notebooks/{lang}/{name} is stale: run `make build`"


def _revisits(lesson: str) -> dict[int, str]:
    """Exercise number -> the earlier lesson it revisits (a capstone's exercises)."""
    number = lesson.split("_", 1)[0]
    return getattr(importlib.import_module(f"autograder.lessons.lesson{number}"), "REVISITS", {})


def _lesson_ids(lesson: str) -> list[str]:
    return sorted(i for i, entry in CATALOGUE.items() if entry.lesson == lesson)


@pytest.mark.parametrize("source", SOURCES, ids=LESSONS)
def test_lesson_has_what_every_lesson_must_have(source):
    nb = bilingual.read(source)
    cells = nb.cells
    tests = [c for c in cells if _nbgrader(c).get("grade") and c.cell_type == "code"]
    manual = [c for c in cells if _nbgrader(c).get("grade") and c.cell_type == "markdown"]
    assert len(tests) >= 4 and len(manual) == 1  # CURRICULUM.md: at least 4 auto-graded
    for cell in tests:
        assert "### BEGIN HIDDEN TESTS" in cell.source, cell.id
    prose = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    for misconception in _lesson_ids(source.parent.name):
        assert f"Common misconception {misconception}" in prose
        assert f"常见误区 {misconception}" in prose
    if _revisits(source.parent.name):
        # a capstone names, in both languages, the misconception of every bug it plants
        number = source.parent.name.split("_", 1)[0]
        exercises = importlib.import_module(f"autograder.lessons.lesson{number}").EXERCISES
        for lang in LANGUAGES:
            text = "\n".join(c.source for c in cells if bilingual.cell_language(c) == lang)
            for misconception in (m for ex in exercises for m in ex.misconceptions):
                assert misconception in text, (lang, misconception)
    assert "Learning goals" in prose and "学习目标" in prose
    assert "## Recap" in prose and "## 小结" in prose
    assert "**Predict.**" in prose and "**先预测。**" in prose
    assert any("self_check(globals())" in c.source for c in cells if c.cell_type == "code")
    figures = ("graph.draw(", "plt.subplots(", "plt.figure(")
    assert any(f in c.source for c in cells if c.cell_type == "code" for f in figures)


def test_catalogue_matches_the_curriculum():
    curriculum = REPO.parent / "shared" / "CURRICULUM.md"
    if not curriculum.is_file():
        pytest.skip("shared/CURRICULUM.md is not beside this checkout")
    listed = set(re.findall(r"^- ([A-Z]{2}-\d+) ", curriculum.read_text(encoding="utf-8"), re.M))
    assert set(CATALOGUE) <= listed, "the catalogue has IDs the curriculum does not"
    for lesson in LESSONS:
        if not _lesson_ids(lesson):
            # only a capstone has no IDs of its own: its exercises revisit earlier lessons
            assert _revisits(lesson), f"{lesson} has no misconception IDs"
            continue
        prefix = _lesson_ids(lesson)[0].split("-")[0]
        in_curriculum = {i for i in listed if i.startswith(prefix + "-")}
        assert in_curriculum == set(_lesson_ids(lesson)), lesson


@pytest.mark.notebooks
@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_edited_learner_notebook_still_runs_and_the_self_check_says_what_is_missing(lang):
    from nbclient import NotebookClient

    nb = _learner(lang, "01_requires_grad")
    drop = {"ex1_product_grads", "ex3_make_trainable", "ex2_output_requires_grad_tests"}
    nb.cells = [c for c in nb.cells if _nbgrader(c).get("grade_id") not in drop]
    for cell in nb.cells:
        if _nbgrader(cell).get("grade_id") == "ex2_output_requires_grad":
            cell.source = "def output_requires_grad(*inputs):\n    return (("  # syntax error
    NotebookClient(
        nb, timeout=120, kernel_name="python3", allow_errors=True, shutdown_kernel="immediate"
    ).execute()
    report = nb.cells[[i for i, c in enumerate(nb.cells) if "self_check(" in c.source][-1]]
    text = "".join(str(o.get("data", {}).get("text/plain", "")) for o in report.outputs)
    could_not_run = "could not run" if lang == "en" else "无法运行"
    for name in ("product_grads", "make_trainable", "output_requires_grad"):
        line = next(
            line for line in text.splitlines() if f"（{name}）" in line or f"({name})" in line
        )
        assert could_not_run in line and name in line
    not_attempted = "not attempted" if lang == "en" else "尚未作答"
    assert not_attempted in next(line for line in text.splitlines() if "to_device" in line)
    assert nbformat.validate(nb) is None
