"""The references of lesson 03's checks: held only by the judge (see ``autograder.references``).

Run only in the judge's process, and ahead of time to write
``autograder/lessons/expected/lesson03.wire``; the cases, worlds and rules they answer are
in :mod:`autograder.lessons.lesson03`, which runs beside learner code and holds no answer.
The torch functions the references are made of are taken here, at import: where the judge
shares a process with learner code (the tests), a learner's patch of ``torch`` does not
reach them.
"""

from __future__ import annotations

import torch

import autograder.common.trusted as trusted
from autograder.common.dropout import DROPOUT as _DROPOUT
from autograder.common.layer_watch import BATCHNORM as _BATCHNORM
from autograder.lessons import lesson03 as checks
from autograder.lessons.lesson03 import World, _where
from autograder.references import answers, modes_kept

_mse = torch.nn.functional.mse_loss
_stack = torch.stack


@answers(checks.DropoutByHand)
def dropout_by_hand(spec, world: World, case: dict):
    x, p, u, training = world.args
    if not training:
        return x
    return _where(u < p, trusted.zeros((), dtype=x.dtype, device=x.device), x / (1 - p))


@answers(checks.EvalGrads)
def eval_grads(spec, world: World, case: dict):
    model, x, target = world.args
    names, params = zip(*model.named_parameters(), strict=True)
    with modes_kept(model):
        model.eval()
        grads = trusted.autograd_grad(_mse(model(x), target), params)
    return dict(zip(names, grads, strict=True))


@answers(checks.Validate)
def validate(spec, world: World, case: dict):
    model, batches = world.args
    with modes_kept(model), trusted.no_grad():
        model.eval()
        losses = [_mse(model(x), y).item() for x, y in batches]
    return sum(losses) / trusted.len_(losses)


@answers(checks.FinetuneHead)
def finetune_head(spec, world: World, case: dict):
    backbone, head, x, target, lr = world.args
    backbone.eval()
    head.train()
    with trusted.no_grad():
        features = backbone(x)
    optimizer = torch.optim.SGD(head.parameters(), lr=lr)
    optimizer.zero_grad()
    loss = _mse(head(features), target)
    loss.backward()
    optimizer.step()
    return loss.item()


@answers(checks.McDropoutPredict)
def mc_dropout_predict(spec, world: World, case: dict):
    model, x, samples = world.args
    with modes_kept(model), trusted.no_grad():
        model.eval()
        for m in model.modules():
            if trusted.isinstance_(m, _DROPOUT):
                m.train()
        preds = _stack([model(x) for _ in range(samples)])
    return preds.mean(dim=0), preds.std(dim=0)


@answers(checks.FinetuneMode)
def finetune_mode(spec, world: World, case: dict):
    (model,) = world.args
    model.train()
    for m in model.modules():
        if trusted.isinstance_(m, _BATCHNORM):
            m.eval()
