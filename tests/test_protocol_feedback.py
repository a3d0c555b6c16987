"""How an exception of the learner's reads in feedback, and what the memory counters agree on."""

from __future__ import annotations

import pytest
import torch

from autograder.common.i18n import Text
from autograder.common.protocol import call, returned
from autograder.common.result import CheckFailed
from autograder.kernel.measure import AliveSavedBytes, saved_bytes

EX = Text("Exercise 9 — a test", "练习 9 —— 测试")
WHY = Text("this is why", "原因在这里")


def _raises(message: str):
    def fn():
        raise RuntimeError(message)

    return call(fn).record()


def test_an_explanation_follows_the_quoted_pytorch_text_in_each_language():
    with pytest.raises(CheckFailed) as failure:
        returned(
            EX,
            _raises("element 0 of tensors"),
            "f",
            classify=lambda m: "NG-5",
            explain=lambda m: WHY,
        )
    assert failure.value.misconceptions == ["NG-5"]
    assert "“element 0 of tensors” — this is why" in failure.value.feedback("en")
    assert "“element 0 of tensors”——原因在这里" in failure.value.feedback("zh")


def test_a_bare_id_or_none_still_works_without_an_explanation():
    with pytest.raises(CheckFailed) as failure:
        returned(EX, _raises("boom"), "f", classify=lambda m: None)
    assert not failure.value.misconceptions
    assert failure.value.feedback("en").rstrip().endswith("“boom”")
    with pytest.raises(CheckFailed) as failure:
        returned(EX, _raises("boom"), "f", classify=lambda m: "NG-2")
    assert failure.value.misconceptions == ["NG-2"]


def test_alive_saved_bytes_packs_what_saved_bytes_counts():
    x = torch.ones(5, 3, dtype=torch.float64, requires_grad=True)
    _, counted = saved_bytes(lambda t: (t * t).exp().sum(), x)
    with AliveSavedBytes() as kept:
        (x * x).exp().sum()
    assert kept.packed == counted == 3 * 5 * 3 * 8
