"""Machines of other kinds, simulated for one call: torch's probing functions answer as there.

Lesson 06's device picker must name an accelerator only where one is usable, on machines the
checks cannot be: a CUDA build without a GPU, two GPUs, Apple's MPS, Intel's XPU. Each is
played by stand-ins for the probing functions (``torch.accelerator``, ``torch.cuda``,
``torch.mps``, ``torch.backends.mps``, ``torch.xpu``), also where the learner's code imported
them by name; a last call runs on this machine as it is, told apart by the real probes taken
at import. This module runs beside learner code: type tests go through ``trusted``.
"""

from __future__ import annotations

import contextlib

import torch

from autograder.common import trusted
from autograder.common.i18n import Text
from autograder.common.oracle import World

# Taken when the checks are imported, before any learner code runs.
_REAL_IS_AVAILABLE = torch.accelerator.is_available
_REAL_CURRENT = torch.accelerator.current_accelerator
_DEVICE_CONTEXT = torch._GLOBAL_DEVICE_CONTEXT
set_default_device = torch.set_default_device

# (what the machine is, the build's accelerator, how many usable devices)
MACHINES = {
    "cuda, no GPU": (Text("a CUDA build, no usable GPU", "CUDA 版本、没有可用的 GPU"), "cuda", 0),
    "cuda, 1 GPU": (Text("a CUDA build with one GPU", "CUDA 版本、有一块 GPU"), "cuda", 1),
    "cuda, 2 GPUs": (Text("a CUDA build with two GPUs", "CUDA 版本、有两块 GPU"), "cuda", 2),
    "cpu build": (Text("a CPU-only build", "只支持 CPU 的版本"), None, 0),
    "mps": (Text("a build for Apple GPUs (MPS), usable", "Apple GPU（MPS）版本、可用"), "mps", 1),
    "mps, unusable": (Text("an MPS build, GPU not usable", "MPS 版本、GPU 不可用"), "mps", 0),
    "xpu": (Text("a build for Intel GPUs (XPU), usable", "Intel GPU（XPU）版本、可用"), "xpu", 1),
}


def _answers(built: str | None, count: int) -> list[tuple[object, str, object]]:
    """Stand-ins for torch's probing functions, as they answer on one kind of machine."""
    device = None if built is None else torch.device(built)
    usable = count > 0

    def current_accelerator(check_available: bool = False):
        return None if check_available and not usable else device

    cuda, mps, xpu = built == "cuda", built == "mps", built == "xpu"
    return [
        (torch.accelerator, "current_accelerator", current_accelerator),
        (torch.accelerator, "is_available", lambda: usable),
        (torch.accelerator, "device_count", lambda: count),
        (torch.cuda, "is_available", lambda: usable and cuda),
        (torch.cuda, "device_count", lambda: count if cuda else 0),
        (torch.mps, "device_count", lambda: count if mps else 0),
        (torch.mps, "is_available", lambda: usable and mps),
        (torch.backends.mps, "is_available", lambda: usable and mps),
        (torch.backends.mps, "is_built", lambda: mps),
        (torch.backends.cuda, "is_built", lambda: cuda),
        (torch.xpu, "is_available", lambda: usable and xpu),
        (torch.xpu, "device_count", lambda: count if xpu else 0),
    ]


def default_device() -> str | None:
    """torch's default device as set_default_device left it, read without allocating."""
    context = getattr(_DEVICE_CONTEXT, "device_context", None)
    return None if context is None else str(context.device)


def _learner_globals(fn) -> dict:
    """The namespace the learner's code looks names up in (a function's, or a class's)."""
    found = getattr(fn, "__globals__", None)
    if found is None:
        found = getattr(vars(trusted.type_(fn)).get("__call__"), "__globals__", None)
    return found if trusted.type_(found) is dict else {}


@contextlib.contextmanager
def machine(built: str | None, count: int, fn, world: World | None = None):
    """torch's probing functions answer as on one machine, also where the learner's code
    imported them by name (``from torch.accelerator import is_available``); restored after,
    with torch's default device (logged in ``world`` first)."""
    default = default_device()
    patches = _answers(built, count)
    namespace = _learner_globals(fn)
    stand_ins = {id(getattr(owner, name)): new for owner, name, new in patches}
    renamed = {k: v for k, v in namespace.items() if id(v) in stand_ins}
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, new in patches:
            setattr(owner, name, new)
        namespace.update({k: stand_ins[id(v)] for k, v in renamed.items()})
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
        namespace.update(renamed)
        if world is not None:
            world.logged["torch.get_default_device()"] = {
                "kind": "str",
                "value": str(default_device() or "cpu"),
            }
        set_default_device(default)


def this_machine() -> list:
    """This machine as the simulated ones are told apart: [the build's accelerator, usable],
    from the trusted probes (taken at import)."""
    built = _REAL_CURRENT()
    return [None if built is None else built.type, bool(_REAL_IS_AVAILABLE())]


def twin(machine, cases: list[dict]) -> dict | None:
    """The drawn case whose simulated machine is of this machine's kind, if any."""
    built, usable = machine
    kinds = {name: (spec[1], spec[2] > 0) for name, spec in MACHINES.items()}
    return next((c for c in cases if kinds[c["machine"]] == (built, usable)), None)
