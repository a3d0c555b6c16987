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

Usage: ``python -m autograder.classroom.own_pids [--] COMMAND ...``
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
NO_NAMESPACE = 97  # no user namespace could be made (the server did not start)
NO_PROC = 98  # PID 1 could not mount /proc (the server did not start)
SAID = "own_pids: the server sees every user's processes"


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


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


def _init(command: list[str]) -> None:
    """PID 1 of the new namespace: a fresh /proc, the server as its child, orphans reaped."""
    libc = _libc()
    try:
        _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount private")
        flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
        _check(libc.mount(b"proc", b"/proc", b"proc", flags, None), "mount /proc")
    except OSError as error:
        print(f"{SAID} ({error})", file=sys.stderr)
        os._exit(NO_PROC)
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


def _namespaced(command: list[str]) -> None:
    """The new namespaces' parent: they are made here, in a child of the wrapper, so that a
    refusal leaves the wrapper as it was, free to run the server as it is."""
    uid, gid = os.getuid(), os.getgid()
    libc = _libc()
    try:
        _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS), "unshare")
        _map_self(uid, gid)
    except OSError as error:
        print(f"{SAID} ({error})", file=sys.stderr)
        os._exit(NO_NAMESPACE)
    init = os.fork()
    if init == 0:
        _init(command)
    _forward_to(init)
    _, status = os.waitpid(init, 0)
    os._exit(_status(status))


def main(argv: list[str]) -> int:
    command = argv[1:] if argv[:1] == ["--"] else argv
    if not command:
        print(__doc__.splitlines()[-1], file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:
        _namespaced(command)
    _forward_to(child)
    _, status = os.waitpid(child, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) in (NO_NAMESPACE, NO_PROC):
        _as_is(command, "see above")
    return _status(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
