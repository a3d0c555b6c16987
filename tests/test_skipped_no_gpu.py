"""A check that needs a real GPU says "skipped: no GPU" beside its pass, never a silent pass."""

from __future__ import annotations

import pytest
import torch
from conftest import SOLUTIONS
from lesson_cells import graded_cells, run

from autograder.common import protocol
from autograder.grader.pipeline.judge import judge_cell
from autograder.kernel.observer import observe_cell

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
CELLS = graded_cells(SOLUTIONS / "06_cuda_async" / "06_cuda_async.ipynb")
GPU_ONLY = ["ex1_benchmark", "ex2_to_host", "ex4_load_batch", "ex6_overlap_copy"]


@pytest.mark.parametrize("grade_id", GPU_ONLY)
def test_self_study_prints_the_skip_after_the_pass(grade_id, capsys, monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    namespace = run(CELLS[grade_id].source)
    run(CELLS[f"{grade_id}_tests"].source, namespace)
    printed = capsys.readouterr().out
    assert "all checks passed" in printed and "skipped: no GPU" in printed


@pytest.mark.parametrize("grade_id", GPU_ONLY)
def test_the_graders_verdict_says_so_too(grade_id, monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    source = CELLS[f"{grade_id}_tests"].source
    try:
        observations = observe_cell(["import torch", CELLS[grade_id].source], source)
    finally:
        protocol.MODE.reset()
    verdict = judge_cell(source, {"status": "ok", "observations": observations}, "zh")
    assert verdict.passed and "已跳过：没有 GPU" in verdict.feedback
