"""The references of lesson 02's checks: held only by the judge (see ``autograder.references``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import autograder.common.trusted as trusted
from autograder.lessons import lesson02 as checks
from autograder.lessons.lesson02 import World  # noqa: F401
from autograder.references import answers


@answers(checks.Evaluate)
def evaluate(spec, world: World, case: dict):
    model, batches = world.args
    with torch.no_grad():
        losses = [F.cross_entropy(model(x), y).item() for x, y in batches]
        hits = [(model(x).argmax(dim=1) == y).double().mean().item() for x, y in batches]
    return sum(losses) / len(batches), sum(hits) / len(batches)


@answers(checks.CountSavedBytes)
def count_saved_bytes(spec, world: World, case: dict):
    fn, *args = world.args
    total = 0

    def pack(saved):
        nonlocal total
        total += saved.element_size() * saved.nelement()
        return saved.detach()

    with trusted.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    return result, total


@answers(checks.RunStep)
def run_step(spec, world: World, case: dict):
    model, inputs, labels, optimizer, train = world.args
    with torch.set_grad_enabled(train):
        loss = F.cross_entropy(model(inputs), labels)
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return loss.item()


@answers(checks.FrozenFeatures)
def frozen_features(spec, world: World, case: dict):
    backbone, x = world.args
    with torch.no_grad():
        return backbone(x)


@answers(checks.InputSaliency)
def input_saliency(spec, world: World, case: dict):
    model, x = world.args
    with torch.inference_mode(False), torch.enable_grad():
        leaf = x.clone().requires_grad_()
        (saliency,) = torch.autograd.grad(model(leaf).sum(), leaf)
    return saliency
