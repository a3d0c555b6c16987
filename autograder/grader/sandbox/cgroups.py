"""One control group per submission: its memory and process limits hold for all its processes.

An rlimit bounds one process; a learner who starts four children gets four
times the memory. A cgroup bounds the sum. cgroup v2 is used where the unified
hierarchy has the ``memory`` and ``pids`` controllers (``memory.max``,
``pids.max``); otherwise cgroup v1 (``memory.limit_in_bytes`` in the memory
hierarchy, ``pids.max`` in the pids hierarchy). Groups are made below the
grader's own cgroup, or below the nearest ancestor it may write to, so that a
delegated subtree (root, or a cgroup ``chown``-ed to the grading user) works.

A group may also get a share of the cores (a classroom's ``cpu_limit``): ``cpu.max``
(v2) or ``cpu.cfs_quota_us`` (v1, the cpu hierarchy), where the machine has the cpu
controller; ``CgroupParent.cpu`` says whether it has.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("memory", "pids")
OPTIONAL = ("cpu",)  # used where the machine has it
PREFIX = "course-grade-"
PERIOD_US = 100_000  # the scheduler's accounting period for a cpu quota


@dataclass(frozen=True)
class Cgroup:
    """One submission's group: a folder per hierarchy (one for v2, memory and pids for v1)."""

    folders: tuple[str, ...]

    def procs_files(self) -> list[str]:
        """The ``cgroup.procs`` files a process writes its pid into to join the group."""
        return [str(Path(folder) / "cgroup.procs") for folder in self.folders]

    def pids(self) -> set[int]:
        """Processes in the group now."""
        found: set[int] = set()
        for procs in self.procs_files():
            try:
                found |= {int(line) for line in Path(procs).read_text().split()}
            except OSError:
                continue
        return found

    def peak_memory(self) -> int:
        """The most memory the group has used, in bytes (0 where the kernel does not say)."""
        for folder in self.folders:
            for name in ("memory.peak", "memory.max_usage_in_bytes"):
                value = _read(Path(folder) / name).strip()
                if value.isdigit():
                    return int(value)
        return 0

    def kill_and_remove(self, patience_s: float = 10.0) -> None:
        """SIGKILL every process in the group until it is empty, then remove it."""
        deadline = time.monotonic() + patience_s
        for folder in self.folders:
            kill = Path(folder) / "cgroup.kill"
            if kill.exists():
                _write(kill, "1")
        while True:
            remaining = self.pids()
            if not remaining or time.monotonic() > deadline:
                break
            for pid in remaining:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.05)
        for folder in self.folders:
            for _ in range(100):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)


@dataclass(frozen=True)
class CgroupParent:
    """Where this grader may create submission groups, and which cgroup version that is."""

    version: int
    folders: tuple[str, ...]  # v2: (parent,); v1: (memory parent, pids parent)
    cpu: str | None = None  # where a cpu quota is written: v2 the parent, v1 the cpu parent

    def create(self, memory_bytes: int, processes: int, cpus: float | None = None) -> Cgroup:
        """A new group with these limits, and at most ``cpus`` cores' time where given and
        the parent has the cpu controller; raises OSError where the machine refuses."""
        name = PREFIX + uuid.uuid4().hex[:12]
        quota = f"{max(1000, round(cpus * PERIOD_US))}" if cpus and self.cpu is not None else ""
        parents = list(self.folders)
        if quota and self.version == 1:
            parents.append(self.cpu)  # v1: one more hierarchy to join
        made: list[str] = []
        try:
            for parent in parents:
                folder = Path(parent) / name
                folder.mkdir()
                made.append(str(folder))
            if self.version == 2:
                folder = Path(made[0])
                _write(folder / "memory.max", str(memory_bytes), required=True)
                _write(folder / "memory.swap.max", "0")
                _write(folder / "pids.max", str(processes), required=True)
                if quota:
                    _write(folder / "cpu.max", f"{quota} {PERIOD_US}", required=True)
            else:
                memory, pids = Path(made[0]), Path(made[1])
                _write(memory / "memory.limit_in_bytes", str(memory_bytes), required=True)
                _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
                _write(pids / "pids.max", str(processes), required=True)
                if quota:
                    _write(Path(made[2]) / "cpu.cfs_period_us", str(PERIOD_US), required=True)
                    _write(Path(made[2]) / "cpu.cfs_quota_us", quota, required=True)
        except OSError:
            for folder in made:
                try:
                    os.rmdir(folder)
                except OSError:
                    pass
            raise
        return Cgroup(tuple(made))


def find_parent() -> CgroupParent | str:
    """A parent this process may create limited groups in, or why there is none."""
    mounts = _mounts()
    own = _own_cgroups()
    unified = mounts.get("cgroup2")
    if unified and "0" in own:
        parent = _v2_parent(Path(unified), own["0"])
        if parent:
            cpu = str(parent) if "cpu" in _read(parent / "cgroup.subtree_control").split() else None
            return _checked(CgroupParent(2, (str(parent),), cpu))
    memory, pids = mounts.get("memory"), mounts.get("pids")
    if memory and pids and "memory" in own and "pids" in own:
        folders = tuple(
            str(Path(mount) / own[controller].lstrip("/"))
            for mount, controller in ((memory, "memory"), (pids, "pids"))
        )
        if all(os.access(f, os.W_OK) for f in folders):
            cpu = None
            if "cpu" in mounts and "cpu" in own:
                cpu = str(Path(mounts["cpu"]) / own["cpu"].lstrip("/"))
                cpu = cpu if os.access(cpu, os.W_OK) else None
            return _checked(CgroupParent(1, folders, cpu))
    uid = os.getuid()
    return (
        "no cgroup with the memory and pids controllers that this user "
        f"(uid {uid}) may create groups in: run the grader as root, or delegate a cgroup "
        "to this user (cgroup v2: a subtree with `memory pids` in cgroup.subtree_control "
        "owned by the user, e.g. `systemd-run --user --scope -p Delegate=yes course-grade …`; "
        "cgroup v1: `chown -R` the grader's own folders under /sys/fs/cgroup/memory and "
        "/sys/fs/cgroup/pids to the user)"
    )


def _checked(parent: CgroupParent) -> CgroupParent | str:
    try:
        parent.create(64 * 1024**2, 8).kill_and_remove()
    except OSError as error:
        return f"cgroup v{parent.version} under {parent.folders[0]} refused a group: {error}"
    return parent


def _v2_parent(mount: Path, own: str) -> Path | None:
    """The nearest writable ancestor of our cgroup with memory and pids for its children."""
    folder = mount / own.lstrip("/")
    while True:
        wanted = set(CONTROLLERS)
        if wanted <= set(_read(folder / "cgroup.controllers").split()) and os.access(
            folder, os.W_OK
        ):
            enabled = set(_read(folder / "cgroup.subtree_control").split())
            if folder == mount and not wanted <= enabled:  # the root may always enable them
                extra = set(OPTIONAL) & set(_read(folder / "cgroup.controllers").split())
                _write(folder / "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))
                _write(folder / "cgroup.subtree_control", " ".join(f"+{c}" for c in extra))
                enabled = set(_read(folder / "cgroup.subtree_control").split())
            if wanted <= enabled:
                return folder
        if folder == mount:
            return None
        folder = folder.parent


def _mounts() -> dict[str, str]:
    """Mount points: 'cgroup2' for the unified hierarchy, else each v1 controller's."""
    found: dict[str, str] = {}
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        left, _, right = line.partition(" - ")
        fields, after = left.split(), right.split()
        if len(fields) < 5 or len(after) < 3:
            continue
        if after[0] == "cgroup2":
            found.setdefault("cgroup2", fields[4])
        elif after[0] == "cgroup":
            for option in after[2].split(","):
                if option in CONTROLLERS + OPTIONAL:
                    found.setdefault(option, fields[4])
    return found


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per controller ('0' for the unified hierarchy)."""
    own: dict[str, str] = {}
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        number, controllers, path = line.split(":", 2)
        if number == "0" and not controllers:
            own["0"] = path
        for controller in controllers.split(","):
            if controller in CONTROLLERS + OPTIONAL:
                own[controller] = path
    return own


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str, required: bool = False) -> None:
    try:
        path.write_text(value)
    except OSError:
        if required:
            raise
