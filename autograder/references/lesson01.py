"""The references of lesson 01's checks: held only by the judge (see ``autograder.references``).

Run only in the judge's process, and ahead of time to write
``autograder/lessons/expected/lesson01.wire``; the cases, worlds and rules they answer are
in :mod:`autograder.lessons.lesson01`, which runs beside learner code and holds no answer.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.lessons import lesson01 as checks
from autograder.lessons.lesson01 import World  # noqa: F401
from autograder.references import answers


@answers(checks.ProductGrads)
def product_grads(spec, world: World, case: dict):
    a, b = (t.detach().clone().requires_grad_() for t in world.args)
    c = a * b
    c.retain_grad()
    (c**2).sum().backward()
    return a.grad, b.grad, c.grad


@answers(checks.OutputRequiresGrad)
def output_requires_grad(spec, world: World, case: dict):
    return any(t.requires_grad for t in world.args)


@answers(checks.MakeTrainable)
def make_trainable(spec, world: World, case: dict):
    values, device = world.args
    return torch.tensor(values, dtype=torch.float32, device=device, requires_grad=True)


@answers(checks.PerBatchGrads)
def per_batch_grads(spec, world: World, case: dict):
    w, xs = world.args
    grads = []
    for x in xs:
        w.grad = None
        ((x @ w) ** 2).mean().backward()
        grads.append(w.grad.clone())
    return grads


@answers(checks.BackwardSeed)
def backward_seed(spec, world: World, case: dict):
    return torch.ones_like(world.args[0])


@answers(checks.FinetuneLastLayer)
def finetune_last_layer(spec, world: World, case: dict):
    model, x, target, lr = world.args
    model[:-1].requires_grad_(False)
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()


@answers(checks.ToDevice)
def to_device(spec, world: World, case: dict):
    batch, model, device, dtype = world.args
    return batch.to(device, dtype), model.to(device, dtype)
