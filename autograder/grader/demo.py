"""A demo class: correct, partial and catalogued wrong answers, plus a red-team set.

It exists to show (and test) that grading a real class completes and explains
itself: every submission comes with what grading must conclude about it, in
``demo_expectations_<assignment>.json`` beside ``submitted/``.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[2]


def expectations_path(course_root: Path, assignment: str) -> Path:
    """Where demo-class writes what grading must conclude about each demo submission."""
    return course_root / f"demo_expectations_{assignment}.json"


@dataclass
class Expectation:
    """What grading must conclude about one demo submission."""

    status: str = "graded"
    lost: list[str] = field(default_factory=list)  # test cells that must score 0
    flags: list[str] = field(default_factory=list)  # integrity flag kinds
    reason: str = ""  # a fragment the reason must contain


def _catalogue(assignment: str) -> dict[str, dict[str, str]]:
    """grade_id -> {misconception ID, or "none": code}: the first catalogued wrong answer of each.

    One submission per misconception ID (and one naming none) per exercise keeps the demo
    class the size of the curriculum, however long the catalogues grow.
    """
    number = assignment.split("_", 1)[0]
    tests = str(REPO / "tests")
    path = REPO / "tests" / "catalog" / f"lesson{number}.py"
    spec = importlib.util.spec_from_file_location(f"demo_catalog_{number}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, tests)  # the catalogue imports its record types from tests/catalog
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(tests)
    return {grade_id: _first_of_each_id(answers) for grade_id, answers in module.WRONG.items()}


def _first_of_each_id(answers) -> dict[str, str]:
    first: dict[str, str] = {}
    for answer in answers:
        first.setdefault(answer.misconception or "none", answer.code)
    return first


def _cells(nb) -> dict[str, nbformat.NotebookNode]:
    return {
        c.metadata["nbgrader"]["grade_id"]: c
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade_id")
    }


def _with(base, answers: dict[str, str]):
    nb = copy.deepcopy(base)
    for gid, cell in _cells(nb).items():
        if gid in answers:
            cell.source = answers[gid]
    return nb


def _insert_after_setup(nb, source: str):
    nb = copy.deepcopy(nb)
    setup = next(i for i, c in enumerate(nb.cells) if "autograder.setup(" in c.source)
    nb.cells.insert(setup + 1, nbformat.v4.new_code_cell(source))
    nb.cells[setup + 1].id = "demo-inserted"
    return nb


RED_TEAM = {
    "infinite_loop": "while True:\n    pass",
    "swallow_interrupt": (
        "while True:\n    try:\n        while True:\n            pass\n"
        "    except KeyboardInterrupt:\n        pass"
    ),
    "os_exit": "import os\nos._exit(3)",
    "segfault": "import ctypes\nctypes.string_at(0)",
    "memory_bomb": "blocks = []\nfor _ in range(64):  # 16 GiB, far past the memory limit\n"
    "    blocks.append(bytearray(256 * 1024**2))",
}


def build(course_root: Path, assignment: str) -> dict[str, Expectation]:
    """Write the demo class into ``course_root/submitted`` and return the expectations."""
    name = assignment
    source = nbformat.read(str(course_root / "source" / name / f"{name}.ipynb"), as_version=4)
    learner = nbformat.read(str(course_root / "release" / name / f"{name}.ipynb"), as_version=4)
    solutions = {
        gid: cell.source
        for gid, cell in _cells(source).items()
        if cell.metadata["nbgrader"].get("solution") and cell.cell_type == "code"
    }
    exercises = [gid for gid in solutions]
    tests = [f"{gid}_tests" for gid in exercises]
    solved = _with(learner, solutions)
    wrong = _catalogue(name)
    demo: dict[str, tuple[object, Expectation]] = {}

    demo["solution"] = (solved, Expectation())
    chatty = copy.deepcopy(solved)
    chatty.cells.append(nbformat.v4.new_code_cell("print('my own notes')"))
    chatty.cells[-1].id = "demo-notes"
    demo["solution_with_notes"] = (chatty, Expectation())
    demo["blank"] = (learner, Expectation(lost=list(tests)))
    for k in range(1, len(exercises)):
        partial = {gid: solutions[gid] for gid in exercises[:k]}
        demo[f"partial_{k}"] = (_with(learner, partial), Expectation(lost=tests[k:]))
    for gid, by_id in wrong.items():
        for misconception, code in by_id.items():
            answers = {**solutions, gid: code}
            demo[f"wrong_{gid}_{misconception}"] = (
                _with(learner, answers),
                Expectation(lost=[f"{gid}_tests"], reason=""),
            )
    all_wrong = {**solutions, **{gid: next(iter(by.values())) for gid, by in wrong.items()}}
    demo["wrong_everywhere"] = (
        _with(learner, all_wrong),
        Expectation(lost=[f"{gid}_tests" for gid in wrong]),
    )

    for (label, code), gid in zip(RED_TEAM.items(), exercises, strict=False):
        kind = {"os_exit": "crashed", "segfault": "crashed", "memory_bomb": "graded"}.get(
            label, "timed out"
        )
        reason = "" if kind == "graded" else f"{kind} in {gid}"
        demo[f"red_{label}"] = (
            _with(learner, {**solutions, gid: code}),
            Expectation(status=kind, lost=[f"{gid}_tests"], reason=reason),
        )
    stripped = copy.deepcopy(solved)
    deleted = [
        c for c in stripped.cells if c.metadata.get("nbgrader", {}).get("grade_id") in tests[:2]
    ]
    for cell in deleted:
        stripped.cells.remove(cell)
    demo["red_deleted_tests"] = (
        stripped,
        Expectation("flagged", tests[:2], ["deleted test cell"], "deleted test cell"),
    )
    edited = copy.deepcopy(solved)
    _cells(edited)[tests[2]].source = "pass"
    demo["red_edited_test"] = (
        edited,
        Expectation("flagged", [tests[2]], ["edited test cell"], "edited test cell"),
    )
    bare = copy.deepcopy(solved)
    _cells(bare)[tests[3]].metadata.pop("nbgrader")
    demo["red_stripped_metadata"] = (
        bare,
        Expectation("flagged", [tests[3]], ["metadata-stripped test cell"], "metadata-stripped"),
    )
    demo["red_monkeypatch"] = (
        _insert_after_setup(solved, "torch.allclose = lambda *args, **kwargs: True"),
        Expectation("flagged", list(tests), ["reassigns a protected function"], "torch.allclose"),
    )
    demo["red_hidden_monkeypatch"] = (
        _insert_after_setup(
            solved, "setattr(__import__('tor' + 'ch'), 'allclose', lambda *a, **k: True)"
        ),
        Expectation("flagged", list(tests), ["reassigns a protected function"], "torch.allclose"),
    )
    trick = (
        "class AlwaysYes:\n    def __eq__(self, other):\n        return True\n\n"
        "    def __bool__(self):\n        return True\n"
    )
    demo["red_eq_trick"] = (
        _insert_after_setup(solved, trick),
        Expectation("flagged", list(tests), ["object that always says yes"], "AlwaysYes"),
    )
    reader = (
        "import glob\n"
        "stolen = [open(p).read() for p in glob.glob('../../source/**/*.ipynb', recursive=True)]"
    )
    demo["red_read_sources"] = (
        _insert_after_setup(solved, reader),
        Expectation("flagged", list(tests), ["names course files"], "course files"),
    )

    submitted = course_root / "submitted"
    expectations: dict[str, Expectation] = {}
    for student, (nb, expectation) in demo.items():
        folder = submitted / student / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / f"{name}.ipynb"))
        expectations[student] = expectation
    (submitted / "red_corrupt_json" / name).mkdir(parents=True, exist_ok=True)
    (submitted / "red_corrupt_json" / name / f"{name}.ipynb").write_text('{"cells": [', "utf-8")
    expectations["red_corrupt_json"] = Expectation("corrupt file", list(tests), [], "not a valid")
    shutil.rmtree(submitted / "red_missing_notebook", ignore_errors=True)
    (submitted / "red_missing_notebook" / name).mkdir(parents=True)
    expectations["red_missing_notebook"] = Expectation("missing", list(tests), [], "not submitted")
    expectations_path(course_root, name).write_text(
        json.dumps({k: asdict(v) for k, v in expectations.items()}, indent=1), encoding="utf-8"
    )
    return expectations
