"""The references of lesson 05's checks: held only by the judge (see ``autograder.references``).

Run only in the judge's process, and ahead of time to write
``autograder/lessons/expected/lesson05.wire``; the cases, worlds and rules they answer are
in :mod:`autograder.lessons.lesson05`, which runs beside learner code and holds no answer.
"""

from __future__ import annotations

import torch

from autograder.lessons import lesson05 as checks
from autograder.lessons.lesson05 import World  # noqa: F401
from autograder.references import answers


@answers(checks.ExtractFeatures)
def extract_features(spec, world: World, case: dict):
    model, names, x = world.args
    modules, features = dict(model.named_modules()), {}
    handles = [
        modules[n].register_forward_hook(
            lambda m, args, out, n=n: features.update({n: out.detach().to("cpu", copy=True)})
        )
        for n in names
    ]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return features


@answers(checks.ClipGradients)
def clip_gradients(spec, world: World, case: dict):
    model, m = world.args
    return [p.register_hook(lambda g: g.clamp(-m, m)) for p in model.parameters()]


@answers(checks.MaskOutput)
def mask_output(spec, world: World, case: dict):
    module, mask = world.args
    return module.register_forward_hook(lambda m, args, output: output * mask)


@answers(checks.TrainAndLog)
def train_and_log(spec, world: World, case: dict):
    model, layer_name, batches, lr = world.args
    layer = dict(model.named_modules())[layer_name]
    log = []
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    handle = layer.register_forward_hook(lambda m, args, out: log.append(out.mean().item()))
    try:
        for x, y in batches:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    finally:
        handle.remove()
    return log


@answers(checks.ForwardCountingSaved)
def forward_counting_saved(spec, world: World, case: dict):
    model, x = world.args
    n_bytes = 0

    def pack(t):
        nonlocal n_bytes
        n_bytes += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        output = model(x)
    return output, n_bytes
