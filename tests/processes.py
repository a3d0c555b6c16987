"""Processes the tests start: the venv on PATH, a free loopback port, stopping by group id,
the environment reachable by another user wherever the repository was cloned."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent


def venv_env(**extra: str) -> dict[str, str]:
    """The environment with this venv's commands (nbgrader, alembic, dask…) first on PATH."""
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_group(process: subprocess.Popen) -> None:
    """End the process group this test started (start_new_session=True), and only it."""
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 20)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def folder_others_cannot_enter() -> Path | None:
    """The outermost folder above the environment or the repository that other users may not
    enter (root's home, mode 0700), or None. A classroom's users must run the environment:
    where they cannot, a test that starts a real classroom skips (course-classroom refuses).
    The base interpreter is not asked for: the classroom tests give users a copy of it."""
    needed = [Path(p).resolve() for p in (sys.prefix, REPO)]
    blocked = [a for p in needed for a in p.parents if not a.stat().st_mode & stat.S_IXOTH]
    return min(blocked, key=lambda a: len(a.parts)) if blocked else None


def skip_where_others_cannot_enter() -> None:
    """Skip a test that lets another user run the environment where it lies, without the
    read-only bind of the checkout that `course-classroom setup` makes (reach.py)."""
    import pytest

    blocked = folder_others_cannot_enter()
    if blocked is not None:
        pytest.skip(
            f"skipped: other users may not enter {blocked}, and this test runs the course's "
            "environment where it lies (course-classroom setup shows such a checkout through "
            "a bind mount, tested in test_classroom_private_checkout)"
        )


def reach_for_others(extra: tuple[Path, ...] = ()) -> str | None:
    """Shell commands that make the environment, the repository and ``extra`` reachable by
    any user, to run as root in a private mount namespace; None when one of them is not
    readable by others itself (then a test that needs another user skips).

    A folder above them that others may not enter (root's home, mode 0700) is covered by
    an empty tmpfs into which they are bound back, as ``launch.py`` does for the sandbox.
    """
    needed = [Path(p).resolve() for p in (sys.base_prefix, sys.prefix, REPO, *extra)]
    needed = [p for p in needed if not any(p != q and p.is_relative_to(q) for q in needed)]
    needed = list(dict.fromkeys(needed))
    if any(p.stat().st_mode & 0o005 != 0o005 for p in needed):
        return None
    blocked = {a for p in needed for a in p.parents if not a.stat().st_mode & stat.S_IXOTH}
    outermost = [a for a in blocked if not any(a != b and a.is_relative_to(b) for b in blocked)]
    hidden = [p for p in needed if any(p.is_relative_to(a) for a in outermost)]
    staged = [(p, f"/mnt/reach{k}") for k, p in enumerate(hidden)]  # /mnt: a free mount point
    lines = ["mount -t tmpfs -o mode=755 tmpfs /mnt"]
    lines += [f"mkdir -p {s}; mount --rbind {shlex.quote(str(p))} {s}" for p, s in staged]
    lines += [f"mount -t tmpfs -o mode=755 tmpfs {shlex.quote(str(a))}" for a in outermost]
    lines += [
        f"mkdir -p {shlex.quote(str(p))}; mount --rbind {s} {shlex.quote(str(p))}"
        for p, s in staged
    ]
    return "; ".join(lines + _open_judge_only()) + "; "


def _open_judge_only() -> list[str]:
    """A grader run as another user reads the references through a readable copy, whatever
    a classroom's setup (run by another test) made of the folder's permissions."""
    folder = shlex.quote(str(REPO / "autograder" / "references"))
    return [
        "mkdir /mnt/judge-only",
        f"cp -a {folder}/. /mnt/judge-only/",
        "chmod -R a+rX /mnt/judge-only",
        f"mount --bind /mnt/judge-only {folder}",
    ]
