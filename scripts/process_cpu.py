"""Where a run's CPU goes by program: sample /proc while it runs, group processes by command.

The per-file profile (profile_suite.py) says which test file kept the cores busy; this says
which programs did: pytest's workers, `course-grade`'s processes, the zygotes and the kernels
they fork (a fork keeps its parent's command line), real kernels, servers, Chromium, the
classroom's probes. Each process's CPU (utime + stime, /proc/PID/stat) is read every
interval; a process already running when sampling starts counts only what it spends after,
and one that lives less than an interval may be missed.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path

INTERPRETERS = ("python", "node")
TICKS_PER_S = os.sysconf("SC_CLK_TCK")  # the unit of /proc/PID/stat's CPU times


def command_group(argv: list[str], name: str) -> str:
    """A short name for what a process runs: the program, and for an interpreter its module,
    script or ``-c``; ``[name]`` for a kernel thread (no command line)."""
    if not argv:
        return f"[{name}]"
    program = Path(argv[0]).name
    if not program.startswith(INTERPRETERS):
        return program
    rest = [arg for arg in argv[1:] if arg not in ("-u", "-s", "-P", "-B", "-I", "-E")]
    if rest[:1] == ["-m"] and len(rest) > 1:
        return f"{program} -m {rest[1]}"
    if rest[:1] == ["-c"]:
        return f"{program} -c"
    return f"{program} {Path(rest[0]).name}" if rest else program


def _read(pid: str) -> tuple[str, float, list[str], str] | None:
    """(start time, CPU seconds, argv, name) of one process, or None if it has gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS_PER_S
    return fields[19], cpu, [a.decode(errors="replace") for a in argv if a], name


class ProcessSampler:
    """Samples every process in a thread of its own between ``start`` and ``stop``."""

    def __init__(self, interval_s: float = 0.25):
        self.interval_s = interval_s
        self._seen: dict[tuple[str, str], list] = {}  # (pid, start) -> [first, last, group]
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self, first: bool) -> None:
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or (found := _read(pid)) is None:
                continue
            start, cpu, argv, name = found
            known = self._seen.get((pid, start))
            if known is None:
                # what a process spent before sampling began is not the run's
                self._seen[pid, start] = [cpu if first else 0.0, cpu, command_group(argv, name)]
            else:
                known[1] = cpu

    def _run(self) -> None:
        self._sample(first=True)
        while not self._done.wait(self.interval_s):
            self._sample(first=False)

    def start(self) -> ProcessSampler:
        self._thread.start()
        return self

    def stop(self) -> dict[str, tuple[float, int]]:
        """CPU seconds and process count by command group, largest first."""
        self._done.set()
        self._thread.join()
        self._sample(first=False)
        cpu, count = Counter(), Counter()
        for first, last, group in self._seen.values():
            if last > first:
                cpu[group] += last - first
                count[group] += 1
        return {group: (round(spent, 2), count[group]) for group, spent in cpu.most_common()}


def table(groups: dict[str, tuple[float, int]], top: int = 25) -> str:
    """The ``top`` costliest command groups, with their share of all that was sampled."""
    total = sum(cpu for cpu, _ in groups.values()) or 1.0
    lines = [f"{'command':50s} {'procs':>6s} {'core-s':>8s} {'share':>6s}"]
    for group, (cpu, count) in list(groups.items())[:top]:
        lines.append(f"{group[:50]:50s} {count:6d} {cpu:8.1f} {100 * cpu / total:5.1f}%")
    lines.append(f"{'all sampled':50s} {sum(n for _, n in groups.values()):6d} {total:8.1f}")
    return "\n".join(lines)
