"""References live only with the judge: not in the sandbox, not in a learner's kernel.

The learner's side compares with the references' states shipped as data; these tests show
that the data is fresh, that a process running learner code has no reference to import,
and that an observation made in another world than the case's is refused.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections import OrderedDict

import pytest
import torch
from conftest import REPO
from processes import venv_env

from autograder.common import expectations, oracle, protocol, reference_states
from autograder.common.result import CheckFailed
from autograder.grader.sandbox import bwrap
from autograder.lessons import lesson01
from autograder.references import expected

LEARNER_SIDE = """
import importlib, json, pkgutil, sys
import autograder, autograder.lessons
autograder.setup("en")
for m in pkgutil.iter_modules(autograder.lessons.__path__):
    importlib.import_module("autograder.lessons." + m.name)
from autograder.common import oracle
from autograder.lessons import lesson01 as checks

def product_grads(a, b):
    a, b = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    c = a * b
    c.retain_grad()
    (c ** 2).sum().backward()
    return a.grad, b.grad, c.grad

def forgets_c(a, b):
    return product_grads(a, b)[:2] + (None,)

seen = {}
for name, fn, seed in (("right", product_grads, 1), ("wrong", forgets_c, 1),
                       ("unshipped", product_grads, 12345)):
    try:
        checks.check_product_grads(fn, seed=seed)
        seen[name] = "passed"
    except Exception as failure:
        seen[name] = str(failure)
seen["references"] = [k for k in sys.modules if k.startswith("autograder.references")]
seen["registered"] = len(oracle._REFERENCES)
print(json.dumps(seen))
"""


def test_a_learner_kernel_checks_against_shipped_states_without_any_reference():
    """The notebook's kernel imports every lesson's checks and no reference; a right answer
    passes, a wrong one fails with its misconception, a check nobody shipped says so."""
    ran = subprocess.run(
        [sys.executable, "-c", LEARNER_SIDE], env=venv_env(), capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    seen = json.loads(ran.stdout.splitlines()[-1])
    assert seen["references"] == [] and seen["registered"] == 0, seen
    assert seen["right"] == "passed", seen
    assert "RG-1" in seen["wrong"], seen
    assert "no expected result shipped" in seen["unshipped"], seen


def test_the_shipped_states_are_what_the_references_compute_now():
    assert expected.stale() == [], "run `make build` (python -m autograder.references.expected)"


def test_the_states_were_computed_with_the_torch_the_course_pins():
    pinned = re.search(r'"torch==([^"]+)"', (REPO / "pyproject.toml").read_text()).group(1)
    shipped = expectations.TORCH_VERSION.read_text(encoding="utf-8").strip()
    assert shipped.split("+")[0] == pinned


def test_another_torch_is_named_where_the_learner_runs_one(tmp_path, monkeypatch):
    """A learner's kernel on another torch is told, in the set-up cell's output, that a
    failure may come from the version (bfloat16 draws differ): ``autograder.setup``."""
    version = tmp_path / "torch.version"
    monkeypatch.setattr(expectations, "TORCH_VERSION", version)
    version.write_text(torch.__version__ + "\n", encoding="utf-8")
    assert expectations.other_torch() is None
    version.write_text("2.0.0\n", encoding="utf-8")
    assert expectations.other_torch() == "2.0.0"
    from autograder import _OTHER_TORCH

    for lang in ("en", "zh"):
        shown = _OTHER_TORCH(lang).format(here=torch.__version__, shipped="2.0.0")
        assert "2.0.0" in shown and torch.__version__ in shown and "make lab" in shown


def test_rounding_of_a_cases_large_values_is_not_staleness():
    """A gradient that nearly cancels, in a case whose values reach 1e5 (lesson 05 scales
    the loss by 10,000), came out 0.023 apart on an AVX-512 CPU and on the one that built
    the shipped states; a state that really changed is still stale."""
    large = torch.tensor([1.2e5, -3.0e4])
    built = {"check": {"case": {"grads": [large, torch.tensor([0.0078, -0.0017])]}}}
    elsewhere = {"check": {"case": {"grads": [large.clone(), torch.tensor([-0.0156, -0.0032])]}}}
    changed = {"check": {"case": {"grads": [large.clone(), torch.tensor([2.5, -0.0017])]}}}
    assert expected._same_lesson(elsewhere, built)
    assert not expected._same_lesson(changed, built)
    scaled = {"check": {"case": {"grads": [large * 1.01, torch.tensor([0.0078, -0.0017])]}}}
    assert not expected._same_lesson(scaled, built)


def test_a_changed_reference_makes_its_lesson_stale(monkeypatch):
    """Changing a reference without rebuilding the shipped states fails the test above."""
    original = oracle.reference_of(lesson01.ProductGrads)

    def doubled(spec, world, case):
        return tuple(None if g is None else 2 * g for g in original(spec, world, case))

    monkeypatch.setitem(oracle._REFERENCES, lesson01.ProductGrads, doubled)
    assert expected.stale() == ["lesson01"]


def test_the_judge_computes_a_cases_reference_state_once_and_hands_out_copies(monkeypatch):
    """A grading worker judges a class: each case's state is computed once per reference
    (``reference_states``); every use gets its own copy, and a changed reference (a new
    function) is computed afresh rather than served from what the old one left."""
    calls = []
    original = oracle.reference_of(lesson01.ProductGrads)

    def counted(spec, world, case):
        calls.append(case)
        return original(spec, world, case)

    monkeypatch.setitem(oracle._REFERENCES, lesson01.ProductGrads, counted)
    spec = lesson01.ProductGrads(seed=424_242)
    case = spec.cases()[0]
    first = spec.expected(case)
    computed = len(calls)
    assert computed >= 1
    first["added by one check"] = {"value": 1}
    again = spec.expected(case)
    assert len(calls) == computed and "added by one check" not in again
    assert protocol.to_bytes(again) == protocol.to_bytes(spec.expected(case))

    monkeypatch.setitem(oracle._REFERENCES, lesson01.ProductGrads, lambda *a: counted(*a))
    spec.expected(case)
    assert len(calls) > computed
    computed = len(calls)
    lesson01.ProductGrads(seed=424_243).expected(case)  # another seed: another check's state
    assert len(calls) > computed


def test_the_judge_takes_a_shipped_state_only_from_files_written_from_this_code(
    monkeypatch, tmp_path
):
    """A visible case's state is read from the shipped file instead of being computed again
    in every grading worker; a case that is not shipped (a hidden test's salted seed), every
    case `make build` writes or checks (even one the judge read before), and every case while
    the file does not name the code installed now are computed."""
    computed = []
    original = lesson01.ProductGrads._observe_case

    def counted(self, fn, case, device):
        computed.append(self.seed)
        return original(self, fn, case, device)

    monkeypatch.setattr(lesson01.ProductGrads, "_observe_case", counted)
    monkeypatch.setattr(reference_states, "_kept", OrderedDict())
    visible = lesson01.ProductGrads()  # the self-check's check, shipped
    case = visible.cases()[0]
    assert expectations.current(), "run `make build`"
    state = visible.expected(case)
    assert computed == []
    assert protocol.to_bytes(state) == protocol.to_bytes(expectations.lookup(visible, case))
    salted = lesson01.ProductGrads(seed=424_244)
    salted.expected(salted.cases()[0])
    assert computed == [424_244]
    with expectations.afresh():  # what make build writes and checks: never the shipped copy
        assert protocol.to_bytes(visible.expected(case)) == protocol.to_bytes(state)
    assert computed == [424_244, 0]

    (tmp_path / "sources.sha256").write_text("0" * 64 + "\n", encoding="utf-8")
    monkeypatch.setattr(expectations, "DIGEST", tmp_path / "sources.sha256")
    monkeypatch.setattr(reference_states, "_kept", OrderedDict())
    expectations.forget()
    try:
        assert not expectations.current()
        assert protocol.to_bytes(visible.expected(case)) == protocol.to_bytes(state)
        assert computed == [424_244, 0, 0]
    finally:
        monkeypatch.undo()
        expectations.forget()


def test_an_observation_of_another_world_is_refused():
    """A forged observation must answer the judge's own inputs: one recorded for other
    inputs (here: another seed's) earns nothing, however right it is there."""

    def right(a, b):
        a, b = (t.detach().clone().requires_grad_() for t in (a, b))
        c = a * b
        c.retain_grad()
        (c**2).sum().backward()
        return a.grad, b.grad, c.grad

    elsewhere = lesson01.ProductGrads(seed=7).observe_plain(right)
    here = lesson01.ProductGrads(seed=1)
    elsewhere["cases"] = elsewhere["cases"][: len(here.cases())]
    with pytest.raises(CheckFailed, match="not what the case's seed makes"):
        here.decide(protocol.from_bytes(protocol.to_bytes(elsewhere)))
    here.decide(protocol.from_bytes(protocol.to_bytes(here.observe_plain(right))))


def test_every_shipped_state_is_plain_data():
    for lesson in sorted(p.stem for p in expectations.FOLDER.glob("lesson*.wire")):
        assert expectations.load(lesson), lesson  # read with weights_only=True


SANDBOX_VIEW = (
    "import importlib, os, autograder, autograder.lessons\n"
    "from autograder.common import oracle\n"
    "folder = os.path.join(os.path.dirname(autograder.__file__), 'references')\n"
    "seen = {'listed': sorted(os.listdir(folder)), 'registered': len(oracle._REFERENCES)}\n"
    "for name in ('autograder.references.lesson01', 'autograder.references.expected'):\n"
    "    try:\n"
    "        importlib.import_module(name)\n"
    "        seen[name] = 'imported'\n"
    "    except ImportError as error:\n"
    "        seen[name] = type(error).__name__\n"
)


def test_the_sandbox_shows_no_reference(tmp_path):
    """What a grading observer (forked from the zygote, in bubblewrap) can import."""
    from autograder.grader.pipeline.verdicts import Observation
    from autograder.grader.sandbox import forked

    missing = bwrap.missing_protections(tmp_path)
    if missing:
        pytest.skip(f"skipped: this machine lacks {', '.join(missing)}")
    confinement = bwrap.Confinement()
    zygote = forked.Zygote(confinement, threads=1, cgroups=False)
    folder = zygote.workdir()
    job = {
        "statements": [SANDBOX_VIEW],
        "tests": [{"grade_id": "view", "source": "raise RuntimeError(repr(seen))", "upto": 1}],
        "timeout_s": 120,
        "budget_s": 180,
        "threads": 1,
        "log": "view.observer.log",
    }
    try:
        child = zygote.fork(
            "observer",
            None,
            bwrap.learner_environment(confinement, str(folder), 1),
            cwd=bwrap.learner_scratch(confinement, str(folder)),
            payload=json.dumps(job).encode(),
        )
        observed = Observation(child, [], time.monotonic() + 180).collect()["view"]
    finally:
        zygote.stop()
        shutil.rmtree(folder, ignore_errors=True)
    reason = observed.get("reason", "")
    assert "'listed': []" in reason and "'registered': 0" in reason, observed
    assert "'autograder.references.lesson01': 'ModuleNotFoundError'" in reason, observed
    assert "'autograder.references.expected': 'ModuleNotFoundError'" in reason, observed


FORGER = """
import importlib, pkgutil, sys
import autograder.lessons
from autograder.common import oracle, protocol
lessons = [importlib.import_module("autograder.lessons." + m.name)
           for m in pkgutil.iter_modules(autograder.lessons.__path__)]
observe = oracle.Spec.observe
oracle.Spec.observe = lambda self, fn: observe(self, None)  # "observe the reference"
protocol.MODE.observe()

def stub(*args, **kwargs):
    raise NotImplementedError

for lesson in lessons:
    for exercise in lesson.EXERCISES:
        exercise.check(stub)
sys.stdout.buffer.write(protocol.to_bytes(protocol.MODE.recorded))
"""


def test_observing_the_reference_beside_learner_code_earns_nothing_in_any_lesson():
    """The attack the policy used to let through, run as if the policy had let it through
    again: every check's observe made to call the reference instead of the learner's stub.
    Beside learner code there is no reference to call, so no exercise of any lesson passes."""
    import importlib
    import pkgutil

    import autograder.lessons
    from autograder.grader.pipeline.judge import LearnerName

    ran = subprocess.run([sys.executable, "-c", FORGER], env=venv_env(), capture_output=True)
    assert ran.returncode == 0, ran.stderr.decode()[-3000:]
    recorded = protocol.from_bytes(ran.stdout)
    passed, judged = [], 0
    protocol.MODE.judge(recorded)
    try:
        for info in pkgutil.iter_modules(autograder.lessons.__path__):
            lesson = importlib.import_module(f"autograder.lessons.{info.name}")
            for exercise in lesson.EXERCISES:
                judged += 1
                try:
                    exercise.check(LearnerName(exercise.function))
                    passed.append(f"{info.name} {exercise.function}")
                except CheckFailed as failure:
                    assert "could not be observed" in failure.feedback("en"), failure
    finally:
        protocol.MODE.reset()
    assert passed == [] and judged == len(recorded) > 40
