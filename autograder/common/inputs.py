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


def resolve_device(device) -> torch.device:
    """The device a check runs on: the one asked for, else the course device."""
    return torch.device(device) if device is not None else course_device()


def device_name(device) -> str | None:
    """A check's device as its Spec holds it: the name, or None for the course device."""
    return None if device is None else str(device)
