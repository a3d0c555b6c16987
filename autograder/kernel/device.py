"""The device every lesson and check uses: CUDA when present, else CPU.

Set ``COURSE_DEVICE`` (for example ``cpu`` or ``cuda:1``) to override the choice,
e.g. to practise the CPU path on a GPU machine.
"""

from __future__ import annotations

import os

import torch

_DEVICE_ENV = "COURSE_DEVICE"


class DeviceError(RuntimeError):
    """Raised when the requested device cannot be used on this machine."""


def course_device() -> torch.device:
    """Return the device the course runs on, honouring $COURSE_DEVICE."""
    requested = os.environ.get(_DEVICE_ENV, "").strip()
    if not requested:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(requested)
    except RuntimeError as error:
        raise DeviceError(
            f"{_DEVICE_ENV}={requested!r} is not a device name; try 'cpu' or 'cuda'."
        ) from error
    if device.type == "cuda" and not torch.cuda.is_available():
        raise DeviceError(
            f"{_DEVICE_ENV}={requested!r} asks for CUDA, but torch sees no GPU here; "
            f"unset {_DEVICE_ENV} or set it to 'cpu'."
        )
    return device
