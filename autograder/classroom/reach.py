"""The course's checkout and environment where the classroom's users can reach them.

``make setup`` as root, in a clone under ``/root``, puts the course's code, its ``.venv``
and the packages in a folder only root may enter (``/root`` is mode 0700). The classroom's
users run the course's packages and import its ``autograder`` package, so setup shows them
those folders inside the classroom folder instead, without opening root's home: a
read-only bind mount of the checkout at ``course/`` (and of the environment at ``env/`` when
it lies elsewhere), recorded in ``classroom.json``. Everything the users' side is given
(the hub's Jupyter paths, the classroom's Python's ``.pth``, the grading cluster's
``PYTHONPATH``) names the bound paths. Bind mounts end with a reboot: ``course-classroom
start`` and ``cluster`` (as root) make them again. What setup closes to the instructor's
group in the checkout (``autograder/references``, ``solutions``, ``tests``, ``.git``) stays
closed through the bind, which shows the same files.

Remove a classroom folder only after ``umount FOLDER/course`` (and ``FOLDER/env``); being
read-only, the binds refuse ``rm -r`` instead of passing it on to the checkout.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COURSE, ENV = "course", "env"


class ReachError(RuntimeError):
    """A folder could not be shown to the classroom's users."""


def closed_above(path: Path) -> Path | None:
    """The outermost folder at or above ``path`` that other users may not enter, or None."""
    path = Path(os.path.abspath(path))
    blocked = [p for p in [*reversed(path.parents), path] if not p.stat().st_mode & stat.S_IXOTH]
    return blocked[0] if blocked else None


def needed(folder: Path) -> dict[str, str]:
    """Bound path -> what it shows, for the checkout and the environment where others cannot
    reach them; {} where they can (a clone in /opt or /srv)."""
    prefix = Path(os.path.abspath(sys.prefix))
    binds = {}
    if closed_above(REPO) is not None:
        binds[str(folder / COURSE)] = str(REPO)
    if closed_above(prefix) is not None and not prefix.is_relative_to(REPO):
        binds[str(folder / ENV)] = str(prefix)
    return binds


def _unescaped(field: str) -> str:
    """A path of /proc/self/mountinfo, whose spaces, tabs and backslashes are octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda found: chr(int(found.group(1), 8)), field)


def mounted_at(target: Path) -> bool:
    """Whether something is mounted at ``target`` (a bind from the same file system too, which
    ``os.path.ismount`` cannot tell: the device numbers are the same)."""
    where = os.path.realpath(target)
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return os.path.ismount(where)
    return any(_unescaped(line.split()[4]) == where for line in lines if len(line.split()) > 4)


def ensure(binds: dict[str, str]) -> None:
    """Make each bind that is not there (as root): read-only, not passing set-uid or devices."""
    for target, source in binds.items():
        where = Path(target)
        where.mkdir(mode=0o755, exist_ok=True)
        if mounted_at(where):
            continue
        for command in (
            ["mount", "--bind", source, target],
            ["mount", "-o", "remount,bind,ro,nosuid,nodev", target],
        ):
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                if command[1] != "--bind":
                    subprocess.run(["umount", target], capture_output=True, check=False)
                raise ReachError(
                    f"could not show {source} to the classroom's users at {target} "
                    f"({' '.join(command)}: {done.stderr.strip()}); clone the course where "
                    f"everyone may read (/opt, /srv) / 无法在 {target} 向教室的用户提供 {source}"
                    f"（{' '.join(command)}：{done.stderr.strip()}）；请把课程克隆到所有人都能"
                    "读取的位置（/opt、/srv）"
                )


def release(binds: dict[str, str]) -> None:
    """Unmount the binds (before the classroom folder is removed)."""
    for target in binds:
        if mounted_at(Path(target)):
            subprocess.run(["umount", target], capture_output=True, check=False)


def seen_by_users(path: Path | str, binds: dict[str, str]) -> Path:
    """``path`` as the classroom's users reach it: under a bind's target where a bind shows it."""
    path = Path(os.path.abspath(path))
    # The longest source first: the environment inside the checkout is reached through it.
    for target, source in sorted(binds.items(), key=lambda item: -len(item[1])):
        if path == Path(source) or path.is_relative_to(source):
            return Path(target) / path.relative_to(source)
    return path
