"""How far one submission may go: time per cell and per notebook, memory, processes, disk.

Memory and processes are bounded per submission by its cgroup (cgroups.py). What the
kernel displays is bounded per cell and per notebook (execute.py), so the autograded
notebook the course stores, and the feedback page made from it, stay bounded.
Only where there is none (an ``--unsafe`` run) does each process get an
address-space rlimit instead, which bounds virtual, not real, memory. Scratch
and ``/dev/shm`` are size-limited tmpfs inside the sandbox (bwrap.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Resource limits applied to every process that runs a submission's code."""

    cell_timeout_s: int = 60
    memory_bytes: int = 6 * 1024**3  # the whole submission (cgroup)
    processes: int = 64  # the whole submission (pids cgroup)
    notebook_timeout_s: int = 300  # wall clock for a notebook, restarts and replays included
    scratch_bytes: int = 256 * 1024**2  # the writable /tmp inside the sandbox
    shm_bytes: int = 64 * 1024**2  # /dev/shm inside the sandbox
    address_space: bool = True  # without a cgroup, cap RLIMIT_AS (not with CUDA visible)
    cell_output_bytes: int = 2 * 1024**2  # every output kind of one cell, as stored
    notebook_output_bytes: int = 16 * 1024**2  # all the notebook's outputs together
