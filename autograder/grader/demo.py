"""A demo class: correct, partial and catalogued wrong answers, plus a red-team set.

It exists to show (and test) that grading a real class completes and explains
itself: every submission comes with what grading must conclude about it, in
``demo_expectations_<assignment>.json`` beside ``submitted/``.
"""

from __future__ import annotations

import copy
import importlib
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


def _catalog_package():
    """The answer catalogues' package (tests/catalog), importable as ``catalog``."""
    if "catalog" not in sys.modules:
        folder = REPO / "tests" / "catalog"
        spec = importlib.util.spec_from_file_location(
            "catalog", folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules["catalog"] = package
        spec.loader.exec_module(package)
    return sys.modules["catalog"]


def _catalogue(assignment: str) -> dict[str, dict[str, str]]:
    """One catalogued wrong answer per exercise and misconception ID (or none), by grade_id.

    Only answers that are wrong on every device: the demo class may be graded on a GPU.
    """
    _catalog_package()
    module = importlib.import_module(f"catalog.lesson{assignment.split('_', 1)[0]}")
    wrong: dict[str, dict[str, str]] = {}
    for gid, answers in module.WRONG.items():
        for answer in answers:
            if {"cpu", "cuda"} <= set(answer.devices):
                wrong.setdefault(gid, {}).setdefault(answer.misconception or "no-id", answer.code)
    return wrong


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
            demo[f"wrong_{gid}_{misconception}"] = (
                _with(learner, {**solutions, gid: code}),
                Expectation(lost=[f"{gid}_tests"], reason=""),
            )
    all_wrong = {**solutions, **{gid: next(iter(by.values())) for gid, by in wrong.items()}}
    demo["wrong_everywhere"] = (
        _with(learner, all_wrong),
        Expectation(lost=[f"{gid}_tests" for gid in wrong]),
    )

    for (label, code), gid in zip(RED_TEAM.items(), exercises, strict=False):
        kind = {"os_exit": "crashed", "segfault": "crashed", "memory_bomb": "crashed"}.get(
            label, "timed out"
        )
        reason = "" if kind == "graded" else f"{kind} in {gid}"
        forbidden = ["forbidden construct"] if label in ("os_exit", "segfault") else []
        demo[f"red_{label}"] = (
            _with(learner, {**solutions, gid: code}),
            Expectation(status=kind, lost=[f"{gid}_tests"], flags=forbidden, reason=reason),
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
    # A cell of its own that breaks the learner-code policy is flagged and never runs in the
    # observer; it belongs to no exercise, so the solved exercises keep their points.
    forbidden = ["forbidden construct"]
    demo["red_monkeypatch"] = (
        _insert_after_setup(solved, "torch.allclose = lambda *args, **kwargs: True"),
        Expectation("flagged", [], forbidden, "changes torch.allclose"),
    )
    demo["red_hidden_monkeypatch"] = (
        _insert_after_setup(
            solved, "setattr(__import__('tor' + 'ch'), 'allclose', lambda *a, **k: True)"
        ),
        Expectation("flagged", [], forbidden, "__import__"),
    )
    trick = (
        "class AlwaysYes:\n    def __eq__(self, other):\n        return True\n\n"
        "    def __bool__(self):\n        return True\n"
    )
    demo["red_eq_trick"] = (
        _insert_after_setup(solved, trick),
        Expectation("flagged", [], forbidden, "def __eq__"),
    )
    reader = (
        "import glob\n"
        "stolen = [open(p).read() for p in glob.glob('../../source/**/*.ipynb', recursive=True)]"
    )
    demo["red_read_sources"] = (
        _insert_after_setup(solved, reader),
        Expectation("flagged", [], forbidden, "import glob"),
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
