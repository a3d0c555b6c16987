"""What the grader writes about a submission reads in the reader's language.

A Chinese learner's feedback for a voided test cell, the Chinese class report's tables and
the Chinese course's CSV export hold no English prose: each reason and flag is made in both
languages where it is found, saved with both in the grading record, and shown in one.
Learner-provided parts (ids, names, code) and program output stay as they are. The English
says what it said before. Fast: no grading, the reasons come from the functions that make
them, through a record's JSON round trip, into the real report and export.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import glob
import os
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from language_lint import english_words, identifiers
from test_policy import ROUTES, _violations

from autograder.grader import reasons
from autograder.grader.pipeline import integrity, policy, records, submission, verdicts, worker
from autograder.grader.reports import export, gradebook_rows, report

REPO = Path(__file__).resolve().parents[1]
LESSON = "01_requires_grad"
NAMES = {"nbgrader", "README", "IPython", "MiB", "FIFO", "ID"}  # names Chinese text keeps
ATTACK = "import sys\n\ndef product_grads(a, b):\n    return sys.modules"
CRASH_OUTPUT = "RuntimeError: the zygote went away"  # nbgrader's log: program output
CLAIM = {"username": "bob", "owner": "mallory", "timestamp": "2026-01-10 10:00:00+00:00"}


def _source() -> nbformat.NotebookNode:
    (path,) = glob.glob(str(REPO / "solutions" / f"{LESSON}" / "*.ipynb"))
    return nbformat.read(path, as_version=4)


def _grade_id(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def _submitted(source) -> nbformat.NotebookNode:
    """Lesson 01 as a learner hands it in (test cells as released): ex1 imports sys (the
    policy refuses it), ex2's test cell deleted, ex3's edited, and a cell of the learner's
    own that patches torch."""
    nb = copy.deepcopy(source)
    for cell in nb.cells:
        if integrity.is_test_cell(cell):  # as released: without the hidden tests
            cell.source = integrity.visible_source(cell.source)
        if _grade_id(cell) == "ex1_product_grads":
            cell.source = ATTACK
        elif _grade_id(cell) == "ex3_make_trainable_tests":
            cell.source += "\nassert True"
    nb.cells = [c for c in nb.cells if _grade_id(c) != "ex2_output_requires_grad_tests"]
    nb.cells.insert(3, nbformat.v4.new_code_cell("torch.allclose = print"))
    return nb


def _code_names(sources: list[str]) -> set[str]:
    """The names code uses, modules it imports included."""
    names = identifiers(sources)
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for part in [getattr(node, "module", None) or "", *(a.name for a in node.names)]:
                    names |= set(part.split("."))
    return names


def _known(nb) -> set[str]:
    """What Chinese text may cite as is: the notebook's names and grade ids, and NAMES."""
    code = [policy.parse(c.source) for c in nb.cells if c.cell_type == "code"]
    sources = [ast.unparse(tree) for tree in code if tree is not None]
    return _code_names(sources) | {_grade_id(c) for c in nb.cells} | NAMES


def _flags(source, nb) -> list[integrity.Flag]:
    """Every flag grading finds: reading the submission, then the policy (the judge step's)."""
    found = integrity.structural_flags(source, nb)
    policy_flags, _, _ = verdicts.read_notebook(nb, verdicts.instructor_sources(source))
    return found + [integrity.Flag.from_dict(f) for f in policy_flags]


def test_a_chinese_learners_feedback_for_a_voided_test_has_no_english():
    source = _source()
    nb = _submitted(source)
    found = integrity.structural_flags(source, nb)
    policy_flags, _, _ = verdicts.read_notebook(nb, verdicts.instructor_sources(source))
    read_before = integrity.voided_cells(found)
    voided = {}
    for grade_id in ("ex1_product_grads_tests", "ex2_output_requires_grad_tests"):
        reason = verdicts.voiding(grade_id, policy_flags, read_before)
        assert reason is not None, grade_id
        voided[grade_id] = verdicts.voided_feedback(reason)
    assert verdicts.voiding("ex4_per_batch_grads_tests", policy_flags, read_before) is None
    known = _known(nb)
    for grade_id, text in voided.items():
        assert english_words(text("zh"), known) == [], (grade_id, text.zh)
        assert text.zh.startswith("这个测试不计分："), text.zh
    assert voided["ex1_product_grads_tests"].en.startswith(
        "No credit for this test: ex1_product_grads line 1: import sys. Graded notebooks"
    )
    assert voided["ex2_output_requires_grad_tests"].en.startswith(
        "No credit for this test: deleted test cell in ex2_output_requires_grad_tests: "
        "the graded test cell is not intact. "
    )
    assert "第 1 行：导入 sys" in voided["ex1_product_grads_tests"].zh


@pytest.mark.parametrize("name", list(ROUTES))
def test_every_policy_violation_reads_in_chinese(name):
    code = ROUTES[name][0]
    tree = policy.parse(code)
    known = _code_names([ast.unparse(tree)]) | NAMES
    found = _violations(code)
    assert found
    for violation in found:
        said = violation.describe()
        assert said.en == f"line {violation.line}: {violation.what.en}"
        assert english_words(said.zh, known) == [], said.zh


def test_every_rejection_reads_in_chinese(tmp_path):
    course = tmp_path / "course"
    learner = course / "submitted" / "ann" / LESSON
    learner.mkdir(parents=True)
    made = {}
    (learner / "link.ipynb").symlink_to("/etc/passwd")
    made["link"] = submission.rejection(course, LESSON, "ann", submission.Bounds())
    (learner / "link.ipynb").unlink()
    os.mkfifo(learner / "pipe")
    made["fifo"] = submission.rejection(course, LESSON, "ann", submission.Bounds())
    (learner / "pipe").unlink()
    for k in range(3):
        (learner / f"f{k}").write_text("x")
    made["files"] = submission.rejection(course, LESSON, "ann", submission.Bounds(max_files=2))
    made["bytes"] = submission.rejection(course, LESSON, "ann", submission.Bounds(max_bytes=1))
    made["id"] = submission.rejection(course, LESSON, "a*b", submission.Bounds())
    made["name"] = submission.rejection(course, LESSON, "-x", submission.Bounds())
    (learner / ".hidden").write_text("x")
    made["dot"] = submission.rejection(course, LESSON, "ann", submission.Bounds())
    large = nbformat.v4.new_notebook()
    large.cells = [nbformat.v4.new_code_cell("x = 1") for _ in range(verdicts.MAX_CELLS + 1)]
    nbformat.write(large, str(tmp_path / "large.ipynb"))
    made["large"] = submission.problem(tmp_path / "large.ipynb")[1]
    made["missing"] = submission.problem(tmp_path / "none.ipynb")[1]
    assert made["link"].en == "link.ipynb is a symbolic link"
    assert made["files"].en == "more than 2 files and folders"
    assert made["id"].en.startswith("'a*b' is not a valid learner id (letters, digits")
    for key, text in made.items():
        assert text is not None, key
        assert (
            english_words(
                text.zh, {"ann", "link.ipynb", "pipe", "hidden", "f0", "f1", "f2"} | NAMES
            )
            == []
        ), (
            key,
            text.zh,
        )


def _records(tmp_path: Path) -> list[records.GradeRecord]:
    """One learner's record for each way a submission can end, made by the functions that
    grading uses, saved and loaded back."""
    source = _source()
    nb = _submitted(source)
    flags = _flags(source, nb)
    (tmp_path / "submitted" / "ann" / LESSON).mkdir(parents=True)
    os.mkfifo(tmp_path / "submitted" / "ann" / LESSON / "pipe")
    rejected = submission.rejection(tmp_path, LESSON, "ann", submission.Bounds())
    (tmp_path / "bad.ipynb").write_text('{"cells": [', encoding="utf-8")
    corrupt = submission.problem(tmp_path / "bad.ipynb")[1]
    failed = worker._failure({"log": f"Traceback (most recent call last):\n{CRASH_OUTPUT}"}, "")
    timeouts = [
        {"cell": "ex4_per_batch_grads_tests", "kind": "timed out"},
        {"cell": "cell 40", "kind": worker.OUT_OF_TIME},
    ]
    made = {
        "ann": ("rejected", rejected, []),
        "carl": ("corrupt file", corrupt, []),
        "dora": ("error", failed, []),
        "eve": (*worker._status(timeouts, [], 600), []),
        "finn": (*worker._status([{"cell": "cell 5", "kind": "crashed"}], [], 600), []),
        "gus": (*worker._status([], flags, 600), flags),
    }
    for student, (status, reason, found) in made.items():
        record = records.GradeRecord(
            student, LESSON, LESSON, status, **reasons.fields("reason", reason)
        )
        record.flags = [flag.as_dict() for flag in found]
        records.save(tmp_path, record)
    return records.load(tmp_path, LESSON)


def _rows(tmp_path: Path, language: str) -> list[gradebook_rows.Row]:
    root = tmp_path / language
    root.mkdir()
    (root / "nbgrader_config.py").write_text("", encoding="utf-8")
    (root / "submitted" / "hana" / LESSON).mkdir(parents=True)  # handed in, not graded
    rows = [
        gradebook_rows._row(root, language, LESSON, LESSON, r.student, None, r, None, None, {}, 0.0)
        for r in _records(root)
    ]
    for student in ("hana", "ivan"):  # not graded yet; nothing submitted
        rows.append(
            gradebook_rows._row(
                root, language, LESSON, LESSON, student, None, None, None, None, {}, 0.0
            )
        )
    late = dataclasses.replace(
        rows[-1], student="jo", seconds_late=7200.0, timestamp=datetime(2026, 1, 2)
    )
    rows.append(late)
    rows.append(gradebook_rows._refused_row(root, language, LESSON, CLAIM, 0.0))
    return rows


def _program_output_removed(text: str, rows: list[gradebook_rows.Row]) -> str:
    """The reasons without what a program said: nbgrader's last exception, and nbformat's
    error about the corrupt file (the English reason's end)."""
    said = [CRASH_OUTPUT]
    said += [r.reason.split(": ", 1)[1] for r in rows if r.status == "corrupt file"]
    for output in said:
        text = text.replace(output, "")
    return text


def _tables(page: str) -> str:
    """The text of the needs-attention and learner tables."""
    soup = BeautifulSoup(page, "html.parser")
    attention = soup.find(id="attention").find_parent("section")
    learners = soup.find("table", class_="learners")
    return attention.get_text(" ") + " " + learners.get_text(" ")


def test_the_chinese_report_shows_every_reason_and_flag_in_chinese(tmp_path):
    rows = _rows(tmp_path, "zh")
    page = report.lesson_page(rows, LESSON, tmp_path, "zh")
    text = _tables(page)
    learners = {r.student for r in rows} | {"mallory", "pipe", LESSON}  # ids, a file name
    known = _known(_submitted(_source())) | learners
    assert english_words(_program_output_removed(text, rows), known) == []
    for said in (
        "特殊文件",
        "不是有效的笔记本",
        "nbgrader 无法评分",
        "运行超时",
        "内核崩溃",
        "测试单元格被删除",
        "测试单元格被修改",
        "不允许的写法",
        "收取时被拒",
        "没有评分记录",
        "迟交",
    ):
        assert said in text, said


def test_the_english_report_says_what_it_said(tmp_path):
    rows = _rows(tmp_path, "en")
    text = _tables(report.lesson_page(rows, LESSON, tmp_path, "en"))
    for said in (
        "refused at collect: it claims to be bob's submission but mallory made it; "
        "it was not collected",
        "timed out in ex4_per_batch_grads_tests",
        "out of time: the notebook's 600 s budget ran out before cell 40; "
        "the cells from there on were not run",
        "crashed in cell 5",
        "deleted test cell (ex2_output_requires_grad_tests: the graded test cell is not intact)",
        "edited test cell (ex3_make_trainable_tests: its code differs from the original)",
        "forbidden construct (ex1_product_grads: line 1: import sys)",
        f"nbgrader could not grade it: {CRASH_OUTPUT}",
        "no grading record: run `grade` first",
    ):
        assert said in text, said


def test_the_chinese_courses_csv_has_its_reasons_in_chinese(tmp_path):
    zh_rows = _rows(tmp_path, "zh")
    zh_header, zh_table = export.lesson_table(zh_rows)
    en_header, en_table = export.lesson_table(_rows(tmp_path, "en"))
    assert zh_header == en_header
    known = _known(_submitted(_source())) | {"mallory", "bob", "pipe"}
    for row in zh_table:
        for column in ("reason", "flags"):
            said = _program_output_removed(row[column], zh_rows)
            assert english_words(said, known) == [], (row["student"], column, row[column])
    by_student = {row["student"]: row for row in en_table}
    assert by_student["gus"]["flags"] == (
        "deleted test cell; edited test cell; forbidden construct; forbidden construct"
    )
    assert by_student["ivan"]["reason"] == "nothing submitted"


def test_a_record_saved_before_the_chinese_side_shows_its_english(tmp_path):
    record = records.GradeRecord("ann", LESSON, LESSON, "error", "grading worker failed: boom")
    old = {"kind": "deleted test cell", "cell": "ex1_tests", "detail": "gone", "voids": []}
    record.flags = [old]
    records.save(tmp_path, record)
    (loaded,) = records.load(tmp_path, LESSON)
    assert loaded.reason_zh == "" and reasons.shown(loaded, "reason", "zh") == loaded.reason
    assert reasons.shown(old, "kind", "zh") == "deleted test cell"
    flag = integrity.Flag(integrity.EDITED, "ex1_tests", integrity.DIFFERS, ("ex1_tests",))
    assert integrity.Flag.from_dict(flag.as_dict()) == flag
