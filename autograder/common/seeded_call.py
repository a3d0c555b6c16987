"""The call seeded: the CPU's global generator set from a seed for one call, then restored.

Models whose Dropout draws its mask from the CPU's global generator drop the same elements
on every device for one state of it, so a call on a GPU and the reference on the CPU can
be compared. Around one call, :func:`seeded_call` forks the CPU's random state, seeds it,
logs the device the call ran on and, after it, one draw from the generator (what the call
consumed shows there); the learner's own random state is restored afterwards.

This module runs beside learner code: everything it calls was taken at import.
"""

from __future__ import annotations

import contextlib

import torch

from autograder.common import trusted
from autograder.common.oracle import World

# Taken at import, before any learner code runs (see trusted.py).
_fork_rng = torch.random.fork_rng
_seed_cpu = torch.random.default_generator.manual_seed


@contextlib.contextmanager
def seeded_call(world: World, seed: int, outer=None):
    """The CPU's global generator seeded for the call (restored after); the device logged."""
    with _fork_rng(devices=[]):
        _seed_cpu(seed)
        world.logged["device"] = {"kind": "str", "value": world.device.type}
        with outer if outer is not None else contextlib.nullcontext():
            yield
        draw_after = int(trusted.randint(2**30, (1,)))
        world.logged["the global random state after the call"] = {
            "kind": "int",
            "value": draw_after,
        }
