"""How the checks keep what they find: tensors copied off the device, parameters by path.

Every lesson records tensors the same way, so that a found value and the reference's
compare wherever the call ran, and names a parameter as the caller would write it.
"""

from __future__ import annotations

import torch

TENSORS = (torch.Tensor, torch.nn.Parameter)  # trusted.type_(value) in TENSORS: a tensor


def cpu_copy(t: torch.Tensor) -> torch.Tensor:
    """``t``'s values on the CPU, without history, kept whatever the caller does to ``t``."""
    return t.detach().to("cpu", copy=True)


def dotted(name: str) -> str:
    """A ``named_parameters()`` name as Python indexes it: '0.weight' -> '[0].weight'."""
    return "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in name.split("."))
