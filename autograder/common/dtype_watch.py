"""The dtype watch: the dtype each Linear layer computed in, and layers that trained.

Under autocast a model's layers compute in float16 or bfloat16 although its parameters stay
float32, so what a function asked autocast for shows only in what each layer gave.
:func:`watch_dtypes` puts forward hooks on a model's modules: each Linear logs its
output's dtype, and BatchNorm and Dropout calls in training mode are counted.

This module runs beside learner code: everything it calls was taken at import.
"""

from __future__ import annotations

import torch

from autograder.common import trusted
from autograder.common.oracle import World
from autograder.common.recorded import TENSORS

# Taken at import, before any learner code runs (see trusted.py).
_BATCHNORM = torch.nn.modules.batchnorm._BatchNorm
_DROPOUT = torch.nn.modules.dropout._DropoutNd

_DEVICE_DEFAULT = {"cpu": torch.bfloat16, "cuda": torch.float16}  # autocast's own choice


def watch_dtypes(world: World, model: torch.nn.Module, per_device: bool) -> None:
    """Log the dtype each Linear computed in, and BatchNorm/Dropout calls in training mode.

    ``per_device``: the task asks for the device's autocast dtype, so that dtype is logged by
    name, the same for a reference on the CPU (bfloat16) and an answer on a GPU (float16);
    else each dtype is logged as it is (bfloat16 autocast is bfloat16 on every device).
    """
    world.logged["BatchNorm/Dropout calls in training mode"] = {"kind": "int", "value": 0}
    reduced = _DEVICE_DEFAULT.get(world.device.type) if per_device else None

    def linear(m, args, out, name):
        if trusted.type_(out) in TENSORS:
            dtype = "torch.get_autocast_dtype(device)" if out.dtype == reduced else str(out.dtype)
            world.logged[f"dtype of {name}'s output"] = {"kind": "str", "value": dtype}

    def trained(m, args, out):
        if m.training:
            entry = world.logged["BatchNorm/Dropout calls in training mode"]
            entry["value"] += 1

    for k, m in model.named_modules():  # named as indexed: model[0], model[0][1] when nested
        if trusted.isinstance_(m, torch.nn.Linear):
            name = "model" + "".join(f"[{part}]" for part in k.split("."))
            m.register_forward_hook(lambda m, a, o, n=name: linear(m, a, o, n))
        elif trusted.isinstance_(m, (_BATCHNORM, _DROPOUT)):
            m.register_forward_hook(trained)
