"""Seeded inputs for the checks, made with trusted functions on the course device.

Visible checks and hidden checks differ only in their seeds and sizes, so a
learner cannot hard-code an answer that the hidden checks would accept.
"""

from __future__ import annotations

import torch

from autograder.common import trusted
from autograder.kernel.device import course_device


def uniform(seed: int, *shape: int, device, dtype=torch.float32) -> torch.Tensor:
    """Values uniform in [-1, 1), the same for a given seed on every device; shape () too."""
    g = trusted.generator().manual_seed(seed)
    return (trusted.rand(shape, generator=g, dtype=dtype) * 2 - 1).to(device)


def laid_out(seed: int, rows: int, width: int, layout: str, device, dtype) -> torch.Tensor:
    """A batch of ``rows`` (one for "row") laid out as a case's "layout" says: "transposed"
    (not contiguous), "slice" (a view into a larger storage), else contiguous. ``dtype``: a
    torch.dtype or, as a case holds it, its name."""
    dtype = getattr(torch, dtype) if trusted.type_(dtype) is str else dtype
    shape = {"transposed": (width, rows), "slice": (rows + 2, width), "row": (1, width)}
    return viewed(
        uniform(seed, *shape.get(layout, (rows, width)), device=device, dtype=dtype), layout
    )


def viewed(base: torch.Tensor, layout: str) -> torch.Tensor:
    """``base`` seen as a "layout" says: "transposed" its transpose, "slice" without its first
    and last rows (a view into a larger storage), any other layout ``base`` itself."""
    if layout == "transposed":
        return base.t()
    return base[1:-1] if layout == "slice" else base


def resolve_device(device) -> torch.device:
    """The device a check runs on: the one asked for, else the course device."""
    return torch.device(device) if device is not None else course_device()


def device_name(device) -> str | None:
    """A check's device as its Spec holds it: the name, or None for the course device."""
    return None if device is None else str(device)
