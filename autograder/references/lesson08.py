"""The references of lesson 08's checks: held only by the judge (see ``autograder.references``).

The torch functions the repairs are made of are taken here, at import: where the judge
shares a process with learner code (the tests), a learner's patch of ``torch`` does not
reach the references. ``autograder.lessons.lesson08``, which runs beside learner code,
holds none of them. Exercise 4's reference is lesson 04's (``DStep``), found by class.
"""

from __future__ import annotations

import torch

import autograder.common.trusted as trusted
from autograder.lessons import lesson08 as checks
from autograder.lessons.lesson08 import World
from autograder.references import answers

_cross_entropy = torch.nn.functional.cross_entropy
_sigmoid = torch.sigmoid


def _restore(model: torch.nn.Module, modes: list[bool]) -> None:
    """Put every module back in the mode it arrived in (``modes``, in modules() order)."""
    for m, mode in zip(model.modules(), modes, strict=True):
        m.train(mode)


@answers(checks.TrainEpoch)
def train_epoch(spec, world: World, case: dict):
    model, optimizer, batches = world.args
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = _cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@answers(checks.Validate)
def validate(spec, world: World, case: dict):
    model, batches = world.args
    modes = [m.training for m in model.modules()]
    model.eval()
    total = 0.0
    with trusted.no_grad():
        for x, y in batches:
            total += _cross_entropy(model(x), y).item()
    _restore(model, modes)
    return float(total) / trusted.len_(batches)


@answers(checks.Accuracy)
def accuracy(spec, world: World, case: dict):
    model, images, labels = world.args
    modes = [m.training for m in model.modules()]
    model.eval()
    try:
        with trusted.no_grad():
            predicted = model(images).argmax(dim=1)
    finally:
        _restore(model, modes)
    return (predicted == labels).float().mean().item()


@answers(checks.LogFeatures)
def log_features(spec, world: World, case: dict):
    model, layer, batches = world.args
    features = []
    handle = layer.register_forward_hook(lambda m, i, output: features.append(output.detach()))
    try:
        for x, _ in batches:
            model(x)
    finally:
        handle.remove()
    return features


@answers(checks.TimeStep)
def time_step(spec, world: World, case: dict):
    step, synchronize, clock, repeats = world.args
    synchronize()
    start = clock()
    for _ in range(repeats):
        step()
    synchronize()
    return (clock() - start) / repeats


@answers(checks.SwishFunction)
def swish_function(spec, world: World, case: dict):
    x, beta = world.args
    return x * _sigmoid(beta * x)
