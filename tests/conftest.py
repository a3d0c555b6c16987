"""Shared fixtures: the repository's paths, a device parameter that skips CUDA honestly, courses."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from filelock import FileLock

import autograder.references  # noqa: F401 - tests judge as the grader does, with references
from autograder.grader.pipeline.runner import default_workers

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
NOTEBOOKS = REPO / "notebooks"
NO_GPU = "skipped: no GPU"


def _share_the_cores() -> None:
    """Give each pytest-xdist worker its share of the cores, for PyTorch and its children.

    PyTorch starts one thread per core in every process, and an OpenMP thread that waits
    for a core another worker holds spins: the answer catalogue took three times the CPU
    time (and wall time) with two workers on two cores. Kernels the tests start inherit
    the setting; `course-grade` sets its kernels' own. A value already set is kept.
    """
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers is None:  # not a worker (one process runs every test, or xdist's controller)
        return
    threads = max(1, default_workers() // int(workers))  # default_workers: one per core
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


_share_the_cores()


def _device_params():
    return [
        pytest.param("cpu", id="cpu"),
        pytest.param(
            "cuda",
            id="cuda",
            marks=[
                pytest.mark.cuda,
                pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_GPU),
            ],
        ),
    ]


@pytest.fixture(params=_device_params())
def device(request, monkeypatch) -> str:
    """Run the test once per device; the course device follows it through $COURSE_DEVICE."""
    monkeypatch.setenv("COURSE_DEVICE", request.param)
    return request.param


@pytest.fixture(autouse=True)
def _english_feedback(monkeypatch):
    """Tests read feedback in a known language unless they choose one."""
    from autograder.common import i18n

    monkeypatch.setattr(i18n, "_current", None)
    monkeypatch.setenv("COURSE_LANG", "en")


def _run_folder(tmp_path_factory, name: str) -> Path:
    """One folder per test run, shared by pytest-xdist's workers (they share the run's id)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run:
        folder = tmp_path_factory.getbasetemp().parent / f"{name}-{run}"
    else:
        folder = tmp_path_factory.getbasetemp() / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def make_course(tmp_path_factory) -> Callable[[Path, str], Path]:
    """Copy an nbgrader course of every lesson, built once per test run and language.

    Building runs nbgrader's generate_assignment for every lesson; a copy takes
    a moment. The first worker to need a language builds it under a file lock.
    """
    from autograder import course

    shared = _run_folder(tmp_path_factory, "courses")

    def copy(root: Path, lang: str = "en") -> Path:
        built = shared / lang
        with FileLock(str(shared / f"{lang}.lock")):
            if not (built / ".complete").exists():
                shutil.rmtree(built, ignore_errors=True)
                course.create(built, lang, SOLUTIONS)
                (built / ".complete").touch()
        shutil.copytree(built, root, symlinks=True, ignore=shutil.ignore_patterns(".complete"))
        return root

    return copy


@pytest.fixture(scope="session")
def self_study(tmp_path_factory):
    """Catalogued answers judged in self-study once per test run (tests/self_study.py):
    test_lesson_checks and test_catalogue_graded read the same verdicts."""
    from self_study import SelfStudy

    return SelfStudy(_run_folder(tmp_path_factory, "self-study"))


# Test files that take minutes, longest first (measured with --durations). They start
# first, so that the short files fill the gaps.
LONGEST_FIRST = (
    "test_catalogue_graded.py",
    "test_course_grade.py",
    "test_classroom.py",
    "test_grading.py",
    "test_one_verdict.py",
    "test_sandbox.py",
    "test_red_team.py",
    "test_browser.py",
)
# Files of many short tests and no module fixture: their tests go one by one to whichever
# worker is free (last, so that they fill the end of the run). Every other file runs on
# one worker, so that its module fixture (a graded class, a server) runs once. The held-back
# answers (test_unseen_kinds, some five minutes of one core) ran as one unit, started late
# (files run in name order after LONGEST_FIRST), and could end the run on one worker.
# test_feedback_wording reads the catalogue's failures in Chinese from the same self-study
# verdicts as test_lesson_checks (tests/self_study.py): whichever asks first judges.
SPREAD = ("test_feedback_wording.py", "test_lesson_checks.py", "test_unseen_kinds.py")
# Files that set up a classroom hold one machine-wide lock while theirs runs
# (tests/classroom_hub.py): on two workers at once, one waited for the other, its core idle.
# Files whose names start with one of these run as one unit, in turn, on one worker.
TOGETHER = ("test_classroom",)


# What `make test-quick` leaves out besides the notebooks mark: the sweeps over every
# catalogued answer (each answer run, observed and judged; the catalogue's size makes them
# minutes), the tests that build a course (make_course) and those that run pytest, nbgrader,
# a mutation run or a classroom in a subprocess. Each
# file's tests of one exercise, its reference solution and its policy stay. By file: the
# test functions marked slow, or every test of the file (None). `make test` runs them all.
SLOW: dict[str, tuple[str, ...] | None] = {
    "test_lesson_checks.py": (
        "test_wrong_answer_fails_and_names_its_misconception",
        "test_correct_alternative_earns_the_points",
        "test_correct_alternative_passes_the_hidden_checks_of_any_learner",
        "test_reference_solution_passes_the_hidden_checks_of_any_learner",
    ),
    "test_unseen_kinds.py": None,
    "test_feedback_wording.py": ("test_chinese_feedback_is_clean",),
    "test_mutation_sample.py": None,
    "test_setup.py": ("test_make_test_keeps_each_file_on_one_worker",),
    "test_profile_suite.py": ("test_each_file_gets_its_own_wall_time_and_busy_cpu",),
    "test_judge_only.py": (  # the references' states of every lesson computed anew
        "test_the_shipped_states_are_what_the_references_compute_now",
        "test_a_changed_reference_makes_its_lesson_stale",
        "test_observing_the_reference_beside_learner_code_earns_nothing_in_any_lesson",
        "test_a_learner_kernel_checks_against_shipped_states_without_any_reference",
    ),
    "test_hidden_inputs.py": (
        "test_only_the_hidden_checks_move_and_the_judge_follows_the_observer",
    ),
    # classrooms set up with real Unix users, servers and clusters
    "test_classroom_config.py": None,
    "test_classroom_collect.py": None,
}


def _slow(item) -> bool:
    if "make_course" in getattr(item, "fixturenames", ()):  # builds (and grades) a course
        return True
    if item.path.name not in SLOW:
        return False
    functions = SLOW[item.path.name]
    return functions is None or item.originalname in functions


def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        name = item.path.name
        if name in LONGEST_FIRST:
            return LONGEST_FIRST.index(name)
        return len(LONGEST_FIRST) + (name in SPREAD)

    items.sort(key=rank)  # stable: each file keeps its own order
    for item in items:
        if _slow(item):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` as `make test` runs it: file by file, except the SPREAD files
    (test by test) and the TOGETHER files (as one unit).

    Not ``--dist loadgroup`` with a group mark per file: pytest-xdist 3.8 groups by
    rewriting each test's id, which pytest 9.2 no longer lets a plugin do, so every file
    was split across workers and its module fixture ran on each, silently
    (pytest-dev/pytest-xdist#1386). tests/test_setup.py checks the grouping."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FileBySpreadScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope(nodeid, super()._split_scope(nodeid))

    return FileBySpreadScheduling(config, log)


def scope(nodeid: str, path: str) -> str:
    """The unit of work a test belongs to under `make test`: its own id in a SPREAD file,
    the group's in a TOGETHER file, else its file (``path``, as pytest-xdist splits it)."""
    name = Path(path).name
    if name in SPREAD:
        return nodeid
    group = next((prefix for prefix in TOGETHER if name.startswith(prefix)), None)
    return str(Path(path).with_name(f"{group}*")) if group else path
