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
from autograder.references import answers, modes_kept

_cross_entropy = torch.nn.functional.cross_entropy
_sigmoid = torch.sigmoid


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
    total = 0.0
    with modes_kept(model), trusted.no_grad():
        model.eval()
        for x, y in batches:
            total += _cross_entropy(model(x), y).item()
    return float(total) / trusted.len_(batches)


@answers(checks.Accuracy)
def accuracy(spec, world: World, case: dict):
    model, images, labels = world.args
    with modes_kept(model), trusted.no_grad():
        model.eval()
        predicted = model(images).argmax(dim=1)
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
