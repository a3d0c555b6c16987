"""The references of lesson 04's checks: held only by the judge (see ``autograder.references``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.lessons import lesson04 as checks
from autograder.lessons.lesson04 import World  # noqa: F401
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


@answers(checks.GStep)
def g_step(spec, world: World, case: dict):
    G, D, opt_g, z = world.args
    opt_g.zero_grad()
    logits = D(G(z))
    loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
    loss_g.backward()
    opt_g.step()
    return loss_g.item()
