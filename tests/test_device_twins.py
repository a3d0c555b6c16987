"""The check's own run on copies, which lets an answer on a GPU agree with its device.

Lesson 05 ex5 and lesson 09 ex2 run, around the learner's call on a GPU, the computation
the task defines on copies of the caller's objects, and accept agreement with it where the
CPU reference differs (autograder/common/dropout.py's docstring and docs/grading-design.md
say why). `make gpu-check` runs them on a GPU; here the world is told it is on one while
its tensors stay on the CPU, which runs the same machinery without one.
"""

from __future__ import annotations

import pytest
import torch

from autograder.common.oracle import FACT, Context, state
from autograder.kernel.measure import saved_bytes
from autograder.lessons import lesson05, lesson09


def _counting(model, x):
    """A right answer: the output and the bytes autograd saved while it was computed."""
    return saved_bytes(model, x)


def _forward_counting_saved():
    spec = lesson05.ForwardCountingSaved(0, 2, 7, "bfloat16", None)
    case = next(c for c in spec.cases() if c["norm"])
    world = spec.build(case, "cpu")
    world.device = torch.device("cuda")  # as on a GPU: the check's own run takes place
    return spec, case, world


def test_the_copies_run_after_the_call_and_leave_the_callers_objects_alone():
    spec, case, world = _forward_counting_saved()
    model = world.objects["model"]
    bn = next(m for m in model.modules() if isinstance(m, torch.nn.BatchNorm1d))
    with spec.calling(world, case, _counting):
        value = _counting(*world.args)
        tracked = int(bn.num_batches_tracked)
    assert int(bn.num_batches_tracked) == tracked  # the copy trained, not the caller's model
    found = state(world, value, None)
    facts = {k.removeprefix(f"{FACT}here "): v["value"] for k, v in found.items() if FACT in k}
    assert facts["result[1]"] == value[1]
    assert torch.equal(facts["result[0]"], value[0].detach())
    assert any(k.startswith("probe:grad|") for k in facts)


def test_an_answer_may_agree_with_its_device_but_not_differ_from_it():
    spec, case, world = _forward_counting_saved()
    with spec.calling(world, case, _counting):
        value = _counting(*world.args)
    found = state(world, value, None)
    ctx = Context(spec, case, {}, found, base="result[1]")
    assert lesson05._as_there({}, found["result[1]"], ctx)
    assert not lesson05._as_there({}, {**found["result[1]"], "value": value[1] + 4}, ctx)
    ctx.base = "result[0]"
    assert lesson05._as_there({}, found["result[0]"], ctx)
    other = {**found["result[0]"], "dtype": "torch.float16"}  # the answer's own dtype
    assert not lesson05._as_there({}, other, ctx)


def test_on_the_cpu_nothing_is_copied_and_nothing_is_allowed_by_it():
    spec = lesson05.ForwardCountingSaved(0, 2, 7, "bfloat16", None)
    case = spec.cases()[0]
    world = spec.build(case, "cpu")
    with spec.calling(world, case, _counting):
        value = _counting(*world.args)
    found = state(world, value, None)
    assert not any(k.startswith(FACT) for k in found)
    ctx = Context(spec, case, {}, found, base="result[1]")
    assert not lesson05._as_there({}, found["result[1]"], ctx)


def _loss_ctx(loss: float, here: float | None) -> tuple[dict, Context]:
    spec = lesson09.Bf16TrainStep()
    found = {"device": {"kind": "str", "value": "cuda"}, "result": {"kind": "float", "value": loss}}
    if here is not None:
        found[f"{FACT}here result"] = {"kind": "fact", "value": here}
    return found["result"], Context(spec, {}, {"result": {"kind": "float"}}, found, base="result")


def test_a_loss_on_a_gpu_is_held_to_the_checks_own_step_there():
    reference = {"kind": "float", "value": 1.0}
    exact, ctx = _loss_ctx(1.0012, here=1.0012)
    assert lesson09._loosely_close(reference, exact, ctx)
    rounded, ctx = _loss_ctx(1.0, here=1.0012)  # rounded to bfloat16 before .item()
    assert not lesson09._loosely_close(reference, rounded, ctx)
    without, ctx = _loss_ctx(1.0, here=None)  # no step of its own: bfloat16's tolerance
    assert lesson09._loosely_close({"kind": "float", "value": 1.0012}, without, ctx)


def _step(model, loss_fn, x, target, optimizer):
    optimizer.zero_grad()
    loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def _logged_after_a_step(as_on_a_gpu: bool) -> dict:
    spec = lesson09.Bf16TrainStep()
    case = next(c for c in spec.cases() if c["mode"] == "train")
    world = spec.build(case, "cpu")
    if as_on_a_gpu:
        world.device = torch.device("cuda")
    with spec.calling(world, case, _step):
        _step(*world.args)
    return world.logged


@pytest.mark.filterwarnings("ignore:CUDA is not available")  # the world only says "cuda"
def test_the_twin_step_of_lesson_09_logs_its_loss_and_not_the_callers_layers():
    on_cpu, as_on_gpu = _logged_after_a_step(False), _logged_after_a_step(True)
    assert isinstance(as_on_gpu.pop(f"{FACT}here result")["value"], float)
    assert f"{FACT}here result" not in on_cpu
    as_on_gpu.pop("device"), on_cpu.pop("device")
    assert as_on_gpu.keys() == on_cpu.keys()

    def plain(logged: dict) -> dict:
        return {k: v.get("value") for k, v in logged.items() if v.get("kind") != "tensor"}

    assert plain(as_on_gpu) == plain(on_cpu)  # the copy's forward logged no layer call
