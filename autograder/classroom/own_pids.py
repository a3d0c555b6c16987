"""A learner's server in a PID namespace of its own: it sees its own processes only.

Otherwise ``ps``, ``top`` and ``/proc`` in a learner's JupyterLab (its terminal, its
kernels) show every user's processes and their command lines. The hub starts each
learner's server through this wrapper (``hub_config.py``): as the learner, it makes a user
namespace that maps the learner's own uid and gid to themselves, a PID namespace and a
mount namespace with a fresh ``/proc``, and runs the server there under a small init
(PID 1) that passes the hub's signals on and reaps orphans. When the server ends, every
process left in the namespace ends with it. The server keeps the learner's uid, files and
network (the hub's proxy reaches it as before, and the machine-wide Validate slots, abstract
sockets, are shared).

Where the machine refuses unprivileged user namespaces (``user.max_user_namespaces = 0``,
Ubuntu 24.04's ``kernel.apparmor_restrict_unprivileged_userns = 1``, a container whose
``/proc`` is partly masked) it says why on stderr (the server's log) and runs the server as
it is; the README says how to hide processes then (``/proc`` mounted with ``hidepid``).

With ``--tmp-mb N`` the server also gets a ``/tmp`` of its own, a tmpfs of at most N MiB
(counted in its memory limit, spawner.py), with the folders it needs from the machine's
``/tmp`` (its home, its Python, the classroom, where they lie there) bound back.

Usage: ``python -m autograder.classroom.own_pids [--tmp-mb N] [--] COMMAND ...``
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

from autograder.grader.sandbox.isolate import (
    CLONE_NEWNS,
    CLONE_NEWPID,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    check_call,
    load_libc,
)

CLONE_NEWUSER = 0x10000000  # the grader's sandbox runs as root; a learner's server does not
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
NO_NAMESPACE = 97  # no user namespace could be made (the server did not start)
NO_PROC = 98  # PID 1 could not mount /proc (the server did not start)
SAID = "own_pids: the server sees every user's processes"


def _as_is(command: list[str], why: str) -> None:
    """Run the server without namespaces, saying so."""
    print(f"{SAID} ({why}); see the README, 'A class on one machine'", file=sys.stderr)
    sys.stderr.flush()
    os.execvp(command[0], command)


def _map_self(uid: int, gid: int) -> None:
    """In the new user namespace, the learner is themselves (and no one else is anyone)."""
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {uid} 1"),
        ("gid_map", f"{gid} {gid} 1"),
    ):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
            handle.write(text)


def _forward_to(pid: int) -> None:
    def forward(number, _frame):
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            pass

    for number in FORWARDED:
        signal.signal(number, forward)


def _status(status: int) -> int:
    """A child's wait status as a process exit code (128 + signal, as shells say it)."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _needed_under_tmp(command: list[str]) -> list[str]:
    """The folders right under /tmp that hold what the server needs: its home, its Python,
    the course, the classroom (a fresh /tmp would hide them; they are bound back)."""
    here = Path(__file__).resolve()
    needed = [Path.home(), Path(sys.prefix), Path(sys.base_prefix), here.parents[2], Path.cwd()]
    needed += [Path(sys.executable).resolve(), Path(command[0]).resolve()]
    needed += [Path(os.environ[name]) for name in ("COURSE_CLASSROOM",) if name in os.environ]
    tops = set()
    for path in needed:
        parts = path.resolve().parts
        if len(parts) > 2 and parts[:2] == ("/", "tmp"):
            tops.add(f"/tmp/{parts[2]}")
    return sorted(tops)


def _private_tmp(libc, size_mb: int, command: list[str]) -> None:
    """A fresh /tmp of at most ``size_mb`` MiB (its pages count in the server's memory
    limit), with the folders the server needs from the machine's /tmp bound back."""
    kept = {}
    for path in _needed_under_tmp(command):
        with contextlib.suppress(OSError):
            kept[path] = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    options = f"size={size_mb}m,mode=1777".encode()
    check_call(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, options), "mount /tmp")
    for path, fd in kept.items():
        os.mkdir(path, 0o755)
        source = f"/proc/self/fd/{fd}".encode()
        check_call(libc.mount(source, path.encode(), None, MS_BIND | MS_REC, None), f"bind {path}")
        os.close(fd)


def _init(command: list[str], tmp_mb: int | None) -> None:
    """PID 1 of the new namespace: a fresh /proc, the server as its child, orphans reaped."""
    libc = load_libc()
    try:
        check_call(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount private")
        flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
        check_call(libc.mount(b"proc", b"/proc", b"proc", flags, None), "mount /proc")
    except OSError as error:
        print(f"{SAID} ({error})", file=sys.stderr)
        os._exit(NO_PROC)
    if tmp_mb:
        try:
            _private_tmp(libc, tmp_mb, command)
        except OSError as error:
            print(f"own_pids: the server writes in the machine's /tmp ({error})", file=sys.stderr)
    server = os.fork()
    if server == 0:
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    _forward_to(server)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if pid == server:
            os._exit(_status(status))


def _namespaced(command: list[str], tmp_mb: int | None) -> None:
    """The new namespaces' parent: they are made here, in a child of the wrapper, so that a
    refusal leaves the wrapper as it was, free to run the server as it is."""
    uid, gid = os.getuid(), os.getgid()
    libc = load_libc()
    try:
        check_call(libc.unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS), "unshare")
        _map_self(uid, gid)
    except OSError as error:
        print(f"{SAID} ({error})", file=sys.stderr)
        os._exit(NO_NAMESPACE)
    init = os.fork()
    if init == 0:
        _init(command, tmp_mb)
    _forward_to(init)
    _, status = os.waitpid(init, 0)
    os._exit(_status(status))


def main(argv: list[str]) -> int:
    tmp_mb = None
    if argv[:1] == ["--tmp-mb"] and len(argv) > 1 and argv[1].isdigit():
        tmp_mb, argv = int(argv[1]), argv[2:]
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print(__doc__.splitlines()[-1], file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:
        _namespaced(command, tmp_mb)
    _forward_to(child)
    _, status = os.waitpid(child, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) in (NO_NAMESPACE, NO_PROC):
        _as_is(command, "see above")
    return _status(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
