"""The references of lesson 04's checks: held only by the judge (see ``autograder.references``).

Run only in the judge's process, and ahead of time to write
``autograder/lessons/expected/lesson04.wire``; the cases, worlds and rules they answer are
in :mod:`autograder.lessons.lesson04`, which runs beside learner code and holds no answer.
``d_step`` also records the fact ``other order`` (D's running statistics after its two
calls in the other order, which the task allows too), which an allow rule reads.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

from autograder.lessons import lesson04 as checks
from autograder.lessons.lesson04 import World
from autograder.references import answers


@answers(checks.FrozenCopy)
def frozen_copy(spec, world: World, case: dict):
    t = world.objects["t"]
    return t.detach() if case["share"] else t.detach().clone()


@answers(checks.DetachAll)
def detach_all(spec, world: World, case: dict):
    result = []
    for t in world.args[0]:
        try:
            result.append(t.detach_())
        except RuntimeError:
            result.append(t.detach())
    return result


@answers(checks.NormalisedAndGrad)
def normalised_and_grad(spec, world: World, case: dict):
    w, x = world.args
    out = torch.exp(x @ w)
    p = out.detach().clone()
    p.div_(p.sum())
    out.sum().backward()
    return p, w.grad


@answers(checks.DStep)
def d_step(spec, world: World, case: dict):
    world.fact("other order", _other_order(world))
    G, D, opt_d, real, z = world.args
    opt_d.zero_grad()
    fake = G(z).detach()
    real_logits, fake_logits = D(real), D(fake)
    loss_d = F.binary_cross_entropy_with_logits(
        real_logits, torch.ones_like(real_logits)
    ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    loss_d.backward()
    opt_d.step()
    return loss_d.item()


def _other_order(world: World) -> dict:
    """D's running statistics, by base, after D(fake) then D(real) from the world as the call
    finds it: as right as the reference's order (the task fixes none), for the rule that
    allows them. Copies of G and D run, so the reference's own call sees nothing of it."""
    G, D = copy.deepcopy((world.objects["G"], world.objects["D"]))
    *_, real, z = world.args
    with torch.no_grad():
        D(G(z))
        D(real)
    statistics = ("running_mean", "running_var")
    return {
        n: t.clone()
        for n, t in World((), {"D": D}, world.device).tensors()
        if n.endswith(statistics)
    }


@answers(checks.GStep)
def g_step(spec, world: World, case: dict):
    G, D, opt_g, z = world.args
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
