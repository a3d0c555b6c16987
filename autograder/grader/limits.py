"""How far a submission's kernel may go: time per cell, memory, processes.

Memory is bounded with RLIMIT_AS. Processes are bounded with a pids cgroup
where one can be created (root, cgroup v1 or v2 with the pids controller), and
otherwise with RLIMIT_NPROC, which Linux does not enforce for root.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

LAUNCHER = Path(__file__).with_name("launch.py")
_PIDS_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


@dataclass(frozen=True)
class Limits:
    """Resource limits applied to every kernel that runs learner code."""

    cell_timeout_s: int = 60
    memory_bytes: int = 6 * 1024**3
    processes: int = 64

    def launcher_argv(self, cgroup: str = "") -> list[str]:
        """The command prefix that applies these limits, then execs the kernel."""
        argv = [sys.executable, str(LAUNCHER), f"--memory={self.memory_bytes}"]
        if cgroup:
            argv.append(f"--cgroup={cgroup}")
        elif os.getuid() != 0:
            argv.append(f"--processes={self.processes + _own_process_count()}")
        return argv + ["--"]


def _own_process_count() -> int:
    """Processes this user already has: RLIMIT_NPROC counts them too."""
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


def make_pids_cgroup(processes: int) -> Path | None:
    """Create a pids cgroup limited to ``processes``; None where the machine forbids it."""
    for base in _PIDS_ROOTS:
        if not (base / "cgroup.procs").exists() or not os.access(base, os.W_OK):
            continue
        if base == Path("/sys/fs/cgroup") and "pids" not in _read(base / "cgroup.controllers"):
            continue
        group = base / f"autograd-course-{uuid.uuid4().hex[:12]}"
        try:
            group.mkdir()
            (group / "pids.max").write_text(str(processes))
            return group
        except OSError:
            shutil.rmtree(group, ignore_errors=True)
    return None


def remove_pids_cgroup(group: Path | None) -> None:
    """Remove a cgroup made by make_pids_cgroup once its processes are gone."""
    if group is not None:
        try:
            group.rmdir()
        except OSError:
            pass


def process_limit_enforced() -> bool:
    """Whether a kernel's process count can be bounded on this machine."""
    if os.getuid() != 0:
        return True
    group = make_pids_cgroup(1)
    remove_pids_cgroup(group)
    return group is not None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
