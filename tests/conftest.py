"""Shared fixtures: the repository's paths, and a device parameter that skips CUDA honestly."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
NOTEBOOKS = REPO / "notebooks"
NO_GPU = "skipped: no GPU"


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
