"""The mutation score's machinery (issue 33), on a small seeded sample.

``scripts/mutation_score.py`` measures a check by the mutants of its solution it kills
and the rewrites of it that pass. These tests show that the machinery works: operators
make distinct mutants that compile, a known-wrong mutant is killed and a rename passes,
a mutant that hangs or hoards memory is stopped, the sampled run prints its table and
writes its JSON, and every equivalent listed names a mutant the operators still make.
They do not hold the checks to the 98 % bar yet.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import mutation_score  # noqa: E402
from mutation import judge  # noqa: E402
from mutation.operators import GENERIC, OPERATORS, mutants  # noqa: E402
from mutation.transforms import transforms  # noqa: E402

from autograder.common.misconceptions import CATALOGUE  # noqa: E402

SAMPLED = ("ex1_product_grads", "ex1_frozen_copy")


@pytest.fixture(scope="module")
def exercises():
    return {e.grade_id: e for e in mutation_score.load_exercises(["01", "04"], None)}


@pytest.fixture(autouse=True)
def _on_the_cpu(monkeypatch):
    """Forked children must not touch CUDA a parent may have set up: judge on the CPU."""
    monkeypatch.setenv("COURSE_DEVICE", "cpu")


def _mutant(exercise, key: str):
    found = {m.key: m for m in mutants(ast.parse(exercise.solution), exercise.cell)}
    return found[key]


def test_operators_make_distinct_mutants_that_compile(exercises):
    exercise = exercises["ex1_product_grads"]
    made = mutants(ast.parse(exercise.solution), exercise.cell)
    keys = [m.key for m in made]
    assert "drop-retain-grad: delete c.retain_grad()" in keys
    assert len(set(keys)) == len(keys)
    assert len({m.code for m in made}) == len(made)
    for mutant in made:
        compile(mutant.code, mutant.key, "exec")


def test_every_misconception_family_has_an_operator():
    families = {target.split("-")[0] for op in OPERATORS for target in op.targets}
    assert {mid.split("-")[0] for mid in CATALOGUE} <= families
    assert GENERIC in families


def test_a_known_wrong_mutant_is_killed_and_a_transform_passes(exercises):
    exercise = exercises["ex1_product_grads"]
    assert judge.judge(exercise.solution, exercise.tests).passed
    wrong = _mutant(exercise, "drop-retain-grad: delete c.retain_grad()")
    verdict = judge.judge(wrong.code, exercise.tests)
    assert verdict.outcome == judge.FAILED and "c.grad" in verdict.detail
    rewritten = transforms(ast.parse(exercise.solution), exercise.cell)
    assert any(t.operator == "rename-locals" for t in rewritten)
    for transform in rewritten:
        assert judge.judge(transform.code, exercise.tests).passed, transform.key


def test_a_mutant_that_hangs_or_hoards_memory_is_stopped(exercises):
    tests = exercises["ex1_product_grads"].tests
    hangs = judge.judge("while True:\n    pass\n", tests, timeout=2)
    assert hangs.outcome == judge.TIMEOUT and hangs.seconds < 10
    hoards = judge.judge("hoard = bytearray(8 * 2**30)\n", tests, memory_mb=256)
    assert hoards.outcome == judge.FAILED and "MemoryError" in hoards.detail


def test_the_sampled_run_prints_its_table_and_writes_every_verdict(tmp_path, exercises):
    out = tmp_path / "sample.json"
    command = [sys.executable, str(REPO / "scripts" / "mutation_score.py"), "--exercise"]
    command += [*SAMPLED, "--sample", "4", "--seed", "3", "--bar", "0", "--json", str(out)]
    env = {**os.environ, "COURSE_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "| lesson | exercise | mutants | killed |" in run.stdout
    rows = {row["exercise"]: row for row in json.loads(out.read_text())["exercises"]}
    assert set(rows) == set(SAMPLED)
    for grade_id, row in rows.items():
        judged = [r for r in row["records"] if r["kind"] == "mutant"]
        assert row["mutants"] == len(judged) == 4
        assert row["killed"] + row["equivalent"] + row["survived"] == 4
        assert row["transforms_passed"] == row["transforms_total"] >= 1
        exercise = exercises[grade_id]
        drawn = mutation_score.sample(
            mutants(ast.parse(exercise.solution), exercise.cell), 4, 3, exercise
        )
        assert [r["key"] for r in judged] == [m.key for m in drawn]


def test_every_listed_equivalent_names_a_mutant_the_operators_make():
    listed = json.loads(mutation_score.EQUIVALENTS.read_text(encoding="utf-8"))["equivalents"]
    lessons = sorted({entry["lesson"] for entry in listed})
    by_id = {(e.lesson, e.grade_id): e for e in mutation_score.load_exercises(lessons, None)}
    for entry in listed:
        assert entry["reason"] and entry["probe"], entry["mutant"]
        _mutant(by_id[entry["lesson"], entry["exercise"]], entry["mutant"])
