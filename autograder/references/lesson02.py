"""The references of lesson 02's checks: held only by the judge (see ``autograder.references``).

Run only in the judge's process, and ahead of time to write
``autograder/lessons/expected/lesson02.wire``; the cases, worlds and rules they answer are
in :mod:`autograder.lessons.lesson02`, which runs beside learner code and holds no answer.
``count_saved_bytes`` also records the fact ``counts`` (the right count, and what typical
wrong counters find in the same case), which NG-2's blame and judge read.
"""

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
    packed = []  # (bytes, bytes of its storage, which tensor) for each tensor saved

    def pack(saved):
        size = saved.element_size() * saved.nelement()
        which = (saved.data_ptr(), tuple(saved.shape))
        packed.append((size, saved.untyped_storage().nbytes(), which))
        return saved.detach()

    with trusted.saved_tensors_hooks(pack, lambda saved: saved):
        result = fn(*args)
    counts = _counts(world, result, packed)
    world.fact("counts", counts)
    return result, counts["exact"]


def _counts(world: World, result, packed: list[tuple]) -> dict:
    """The right count and what typical wrong counters find: NG-2's blame tells them apart."""
    distinct = {which: size for size, _, which in packed}
    by_address = {which[0]: size for size, _, which in packed}  # x and x.t(): one address
    leaves = [t for _, t in world.tensors() if t.requires_grad and t.is_leaf]
    args = [a for a in world.args[1:] if trusted.isinstance_(a, trusted.tensor_type)]
    # zero is left out: it is also what a counter that never sees a saved tensor finds
    gradients = {_gradient_bytes([result]), _gradient_bytes(args), _gradient_bytes(leaves)} - {0}
    others = {
        sum(storage for _, storage, _ in packed),
        sum(distinct.values()),
        sum(by_address.values()),
    }
    exact = sum(size for size, _, _ in packed)
    return {"exact": exact, "others": sorted(others), "gradients": sorted(gradients)}


def _gradient_bytes(tensors) -> int:
    """Bytes the gradients of ``tensors`` will take: what a counter that sizes those finds."""
    return sum(t.element_size() * t.nelement() for t in tensors if t.requires_grad)


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
