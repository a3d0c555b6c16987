"""The references of lesson 09's checks: held only by the judge (see ``autograder.references``).

The torch functions the answers are made of are taken here, at import: where the judge
shares a process with learner code (the tests), a learner's patch of ``torch`` does not
reach the references. ``autograder.lessons.lesson09``, which runs beside learner code,
holds none of them.
"""

from __future__ import annotations

import torch
import torch.utils.checkpoint

import autograder.common.trusted as trusted
from autograder.lessons import lesson09 as checks
from autograder.lessons.lesson09 import World
from autograder.references import answers

_autocast = torch.autocast
_checkpoint = torch.utils.checkpoint.checkpoint
_functional_call = torch.func.functional_call
_enable_grad = torch.enable_grad
_stack = torch.stack


@answers(checks.CheckpointedForward)
def checkpointed_forward(spec, world: World, case: dict):
    blocks, h = world.args
    for block in blocks:
        h = _checkpoint(block, h, use_reentrant=False)
    return h


@answers(checks.Bf16TrainStep)
def bf16_train_step(spec, world: World, case: dict):
    model, loss_fn, x, target, optimizer = world.args
    optimizer.zero_grad()
    with _autocast(device_type=x.device.type, dtype=torch.bfloat16):
        loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss.item()


@answers(checks.AutocastPredict)
def autocast_predict(spec, world: World, case: dict):
    model, x = world.args
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        with trusted.inference_mode(), _autocast(x.device.type, dtype=torch.bfloat16):
            return model(x).float()
    finally:
        for m, training in modes.items():
            m.training = training


@answers(checks.PerSampleGrads)
def per_sample_grads(spec, world: World, case: dict):
    model, loss_fn, x, y = world.args
    params = {k: p.detach().requires_grad_() for k, p in model.named_parameters()}
    buffers = dict(model.named_buffers())
    rows = {k: [] for k in params}
    with _enable_grad():
        for i in range(x.shape[0]):
            out = _functional_call(model, (params, buffers), (x[i : i + 1],))
            loss = loss_fn(out, y[i : i + 1])
            grads = trusted.autograd_grad(loss, list(params.values()))
            for k, g in zip(params, grads, strict=True):
                rows[k].append(g)
    return {k: _stack(v) for k, v in rows.items()}
