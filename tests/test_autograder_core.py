"""The autograder package's building blocks: device, language, checks, measuring, self-check."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from autograder.common import compare as c
from autograder.common.exercise import Exercise
from autograder.common.i18n import LanguageError, Text, get_language, set_language
from autograder.common.protocol import Check, call, returned, verdict
from autograder.common.result import CheckFailed, require
from autograder.kernel.device import DeviceError, course_device
from autograder.kernel.measure import saved_bytes
from autograder.kernel.selfcheck import run_self_check

# Device ------------------------------------------------------------------------------------


def test_course_device_prefers_cuda_and_falls_back_to_cpu(monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    assert course_device().type == ("cuda" if torch.cuda.is_available() else "cpu")


def test_course_device_follows_the_environment(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert course_device() == torch.device("cpu")


@pytest.mark.parametrize(
    "name", ["not-a-device", "cuda:0" if not torch.cuda.is_available() else "bogus"]
)
def test_course_device_rejects_what_it_cannot_use(monkeypatch, name):
    monkeypatch.setenv("COURSE_DEVICE", name)
    with pytest.raises(DeviceError, match="COURSE_DEVICE"):
        course_device()


# Language ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("code", "lang"), [("zh", "zh"), ("zh_CN", "zh"), ("EN-us", "en")])
def test_language_codes_are_normalised(code, lang):
    assert set_language(code) == lang and get_language() == lang


def test_unknown_language_is_a_clear_error():
    with pytest.raises(LanguageError, match="fr"):
        set_language("fr")


@pytest.mark.parametrize(("en", "zh"), [("", "中文"), ("text", ""), ("text", "no chinese")])
def test_text_needs_both_languages(en, zh):
    with pytest.raises(ValueError):
        Text(en, zh)


# Checks: each must be able to fail ---------------------------------------------------------


def test_flag_checks_pass_and_fail(device):
    leaf = torch.ones(2, device=device, requires_grad=True)
    made = leaf * 2
    assert c.requires_grad(leaf, True, "leaf").passed
    assert not c.requires_grad(made, False, "made").passed
    assert c.is_leaf(leaf, True, "leaf").passed
    assert not c.is_leaf(made, True, "made").passed
    assert c.grad_fn(made, "Mul", "made").passed
    assert not c.grad_fn(made, None, "made").passed
    assert c.grad_fn(leaf, None, "leaf").passed


def test_device_dtype_shape_checks(device):
    t = torch.zeros(2, 3, device=device)
    assert c.on_device(t, device, "t").passed
    assert not c.on_device(t, "meta", "t").passed
    assert c.dtype(t, torch.float32, "t").passed
    assert not c.dtype(t, torch.float64, "t").passed
    assert c.shape(t, (2, 3), "t").passed
    assert not c.shape(t, (3, 2), "t").passed


def test_values_check_uses_a_tolerance_and_refuses_broadcasting(device):
    reference = torch.tensor([1.0, 2.0], device=device)
    assert c.values(reference + 1e-8, reference, "t").passed
    nudged = reference.clone()
    nudged[1] += 0.1
    failed = c.values(nudged, reference, "t", misconception="RG-4")
    assert not failed.passed and failed.misconception == "RG-4"
    assert "t[1] = 2.1" in failed.found("en") and "1 of 2 entries differ" in failed.found("en")
    assert "t[1] = 2" in failed.expected("en")
    assert not c.values(reference[:1], torch.ones(2), "t").passed


def test_saved_bytes_counts_what_backward_needs(device):
    layer = torch.nn.Linear(16, 4).to(device)
    batch = torch.randn(8, 16, device=device)
    _, kept = saved_bytes(layer, batch)
    assert kept == batch.numel() * batch.element_size()
    with torch.no_grad():
        assert saved_bytes(layer, batch)[1] == 0


def test_require_raises_with_every_failure_and_the_misconception_once():
    title = Text("Exercise 0", "练习 0")
    failing = c.values(torch.ones(1), torch.zeros(1), "t", misconception="RG-4")
    with pytest.raises(CheckFailed) as raised:
        require(title, [failing, failing, c.requires_grad(torch.ones(1), False, "t")])
    feedback = raised.value.feedback("en")
    assert feedback.count("RG-4") == 1 and "re-read" in feedback
    assert "常见误区 RG-4" in raised.value.feedback("zh")


# Self-check --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Double(Check):
    """A toy check: the learner doubles a tensor."""

    number = 1

    def observe(self, fn) -> dict:
        return {"call": call(fn, torch.tensor([1.0, 2.0])).record()}

    def judge(self, obs: dict) -> None:
        result = returned(self.heading, obs["call"], "double")
        want = torch.tensor([2.0, 4.0])
        require(self.heading, [c.values(result, want, "result", "RG-4")])


def _check_double(fn):
    verdict(Double(), fn)


EXAMPLE = Exercise(9, "double", Text("double it", "乘以二"), _check_double, ("RG-4",))
EXERCISES = (EXAMPLE,)


def _stub(x):
    raise NotImplementedError()


@pytest.mark.parametrize(
    ("namespace", "status", "fragment"),
    [
        ({"double": lambda x: 2 * x}, "passed", ""),
        ({"double": lambda x: x}, "failed", "RG-4"),
        ({"double": _stub}, "not attempted", ""),
        ({}, "could not run", "double"),
        ({"double": "not a function"}, "failed", ""),
    ],
)
def test_self_check_classifies_without_crashing(namespace, status, fragment):
    (outcome,) = run_self_check([EXAMPLE], namespace)
    assert outcome.status == status
    assert fragment in outcome.line("en")


def test_self_check_report_prints_a_summary_in_the_chosen_language():
    report = run_self_check([EXAMPLE], {})
    assert "Self-check: 0/1" in repr(report)
    set_language("zh")
    assert "自测：0/1" in repr(report) and "无法运行" in repr(report)


def test_while_grading_the_self_check_points_to_the_graded_cells_and_runs_nothing(monkeypatch):
    """In a kernel course-grade runs, every test cell above has already run its checks and
    the grade is the judge's: the self-check says so instead of running them all again."""
    called = []
    monkeypatch.setenv("COURSE_GRADING", "1")
    report = run_self_check([EXAMPLE], {"double": lambda x: called.append(x)})
    assert called == [] and list(report) == []
    assert repr(report).startswith("Self-check: not run again while grading")
    set_language("zh")
    assert repr(report).startswith("自测：评分时不再重复运行")
    assert "自测：评分时不再重复运行" in report._repr_html_()
