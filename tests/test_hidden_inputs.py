"""Hidden tests draw per-submission inputs (issue 22 item 2).

The hidden tests' seeds are public (the course's solutions are), so while grading
they are moved by a salt only the grader can compute: an HMAC of the learner and
the lesson under a random key kept in the course. The visible tests keep their
seeds. Observer and judge apply the same salt, so their records still match.
"""

from __future__ import annotations

import multiprocessing
import stat

import pytest
from conftest import SOLUTIONS
from lesson_cells import graded_cells

from autograder import course
from autograder.common import hidden_tests, protocol
from autograder.grader.pipeline import hidden_inputs
from autograder.grader.pipeline.judge import judge_cell, visible_part
from autograder.grader.pipeline.worker import Task, _config
from autograder.grader.sandbox.bwrap import Confinement
from autograder.kernel.observer import observe_cell

LESSONS = [source.parent.name for source in course.lesson_sources(SOLUTIONS)]
TEST_CELLS = [
    pytest.param(cells[gid].source, id=gid)
    for lesson in LESSONS
    for cells in [graded_cells(SOLUTIONS / lesson / f"{lesson}.ipynb")]
    for gid in cells
    if gid.endswith("_tests")
]


def test_salt_differs_per_learner_and_lesson_and_stays_the_same_for_a_regrade(tmp_path):
    alice = hidden_inputs.salt(tmp_path, "alice", "01_requires_grad")
    assert alice == hidden_inputs.salt(tmp_path, "alice", "01_requires_grad")
    others = {
        hidden_inputs.salt(tmp_path, "bob", "01_requires_grad"),
        hidden_inputs.salt(tmp_path, "alice", "02_no_grad"),
    }
    assert alice not in others and 0 not in others | {alice}


def test_the_key_is_random_per_course_and_private(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert hidden_inputs.salt(one, "alice", "l") != hidden_inputs.salt(two, "alice", "l")
    key = one / hidden_inputs.KEY
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    assert [p.name for p in key.parent.iterdir()] == [key.name]  # no draft left behind


def _key_of(root: str) -> bytes:
    return hidden_inputs.course_key(root)


def test_workers_starting_together_agree_on_one_key(tmp_path):
    with multiprocessing.get_context("fork").Pool(4) as pool:
        keys = pool.map(_key_of, [str(tmp_path)] * 16)
    assert len(set(keys)) == 1 and keys[0] == (tmp_path / hidden_inputs.KEY).read_bytes()


def test_a_test_cell_splits_into_its_visible_and_hidden_parts_in_order():
    source = (
        "check(f, seed=1)\n### BEGIN HIDDEN TESTS\ncheck(f, seed=2)\n"
        "### END HIDDEN TESTS\ncheck(f, seed=3)\n"
    )
    assert hidden_tests.parts(source) == [
        ("check(f, seed=1)\n", False),
        ("check(f, seed=2)\n", True),
        ("check(f, seed=3)\n", False),
    ]


@pytest.mark.parametrize("source", TEST_CELLS)
def test_every_test_cell_of_the_course_splits_where_nbgrader_does(source):
    pieces = hidden_tests.parts(source)
    assert any(hidden for _, hidden in pieces), "a test cell without hidden tests"
    for code, _ in pieces:
        compile(code, "<piece>", "exec")
    shown = "".join(code for code, hidden in pieces if not hidden)
    assert shown.split() == visible_part(source).split()


def _keys(salt: int) -> list[str]:
    cells = graded_cells(SOLUTIONS / "04_detach" / "04_detach.ipynb")
    try:
        found = observe_cell(
            ["import torch", cells["ex4_d_step"].source],
            cells["ex4_d_step_tests"].source,
            salt=salt,
        )
    finally:
        protocol.MODE.reset()
    verdict = judge_cell(
        cells["ex4_d_step_tests"].source, {"status": "ok", "observations": found}, "en", salt=salt
    )
    assert verdict.passed, verdict.feedback
    return [key for key, _ in found]


def test_only_the_hidden_checks_move_and_the_judge_follows_the_observer():
    plain, salted = _keys(0), _keys(5)
    assert plain[0] == salted[0]  # the visible check: what the learner saw
    assert all(a != b for a, b in zip(plain[1:], salted[1:], strict=True))
    assert "seed=712" in salted[1]  # 707 + 5


def test_a_judge_with_another_salt_finds_nothing_to_judge():
    cells = graded_cells(SOLUTIONS / "04_detach" / "04_detach.ipynb")
    source = cells["ex4_d_step_tests"].source
    try:
        found = observe_cell(["import torch", cells["ex4_d_step"].source], source, salt=5)
    finally:
        protocol.MODE.reset()
    verdict = judge_cell(source, {"status": "ok", "observations": found}, "en", salt=6)
    assert not verdict.passed


def test_the_worker_gives_observer_and_judge_the_submissions_salt(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("")
    configs = {
        student: _config(
            Task(str(tmp_path), "04_detach", student, Confinement(), None),
            None,
            tmp_path,
            tmp_path,
            Confinement(),
            {},
        )
        for student in ("alice", "bob")
    }
    for student, config in configs.items():
        expected = hidden_inputs.salt(tmp_path, student, "04_detach")
        assert config.ObserveTestCells.salt == config.JudgeTestCells.salt == expected
    assert configs["alice"].JudgeTestCells.salt != configs["bob"].JudgeTestCells.salt
