"""Confine one forked child of the zygote before it runs any learner code.

The zygote (``zygote.py``) lives in a bubblewrap sandbox that keeps its
capabilities inside its own user namespace; every kernel or observer it forks
calls :func:`enter` first, which gives that child what a fresh bubblewrap
sandbox used to give each process: private mount, PID, network, IPC and UTS
namespaces; a fresh size-limited ``/tmp`` (scratch ``/tmp/work``) and
``/dev/shm``, with the read-only folders the sandbox shows that lie under
``/tmp`` (an environment or a clone there) bound back on top; its own
``/proc``; of the shared spool folder only its own socket folder. Then every
capability is dropped for good and Landlock limits writes to the scratch,
``/dev/shm`` and making sockets in its folder. Nothing one child leaves behind
is visible to the next.
"""

from __future__ import annotations

import ctypes
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from autograder.grader.sandbox import confine

SCRATCH = "/tmp/work"
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 1, 24, 47, 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522


@dataclass(frozen=True)
class Isolation:
    """What one child gets; plain data sent from the grader with the fork request."""

    namespaces: bool  # False only in an --unsafe run without bubblewrap
    landlock: bool
    scratch_bytes: int
    shm_bytes: int
    spool: str  # the zygote's shared folder of socket folders, hidden but for ``sockets``
    sockets: str | None  # this child's socket folder (a kernel's), or None
    readable: tuple[str, ...] = ()  # read-only folders the sandbox shows (Python, package)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def load_libc():
    return ctypes.CDLL(None, use_errno=True)


def check_call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def enter(isolation: Isolation) -> None:
    """Confine this process; with namespaces, return in a new child that is PID 1 of its own.

    The forked intermediate process stays behind to wait for that child and exit
    with its status, so the grader's handle on it tells when the child ends.
    """
    libc = load_libc()
    if isolation.namespaces:
        flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
        check_call(libc.unshare(flags), "unshare")
        check_call(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount private")
        kept = os.open(isolation.sockets, os.O_PATH) if isolation.sockets else None
        shown = {path: os.open(path, os.O_PATH) for path in _under_tmp(isolation.readable)}
        _fresh_tmpfs(libc, "/tmp", isolation.scratch_bytes, 0o755)
        os.mkdir(SCRATCH)
        for path, fd in shown.items():  # the fresh /tmp hid them
            _bind_back(libc, fd, path, MS_BIND | MS_REC)
        _fresh_tmpfs(libc, "/dev/shm", isolation.shm_bytes, 0o1777)
        if not Path(isolation.spool).is_relative_to("/tmp"):  # else the new /tmp hid it
            _fresh_tmpfs(libc, isolation.spool, 1 << 20, 0o755)
        if kept is not None:
            _bind_back(libc, kept, isolation.sockets)
        _become_pid_one(libc)
        check_call(
            libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None),
            "mount /proc",
        )
        _drop_capabilities(libc)
    if isolation.landlock:
        rules = {SCRATCH: confine.EVERYTHING, "/dev/shm": confine.EVERYTHING}
        rules["/dev"] = confine.WRITE_FILE | confine.TRUNCATE
        if isolation.sockets:
            rules[isolation.sockets] = confine.MAKE_SOCK | confine.REMOVE_FILE
        confine.restrict(rules)


def _fresh_tmpfs(libc, target: str, size: int, mode: int) -> None:
    options = f"size={size},mode={mode:o}".encode()
    check_call(
        libc.mount(b"tmpfs", target.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options), target
    )


def _under_tmp(paths: tuple[str, ...]) -> list[str]:
    """Those of ``paths`` that a fresh /tmp would hide, without any that lie in another."""
    hidden = sorted(p for p in paths if Path(p).is_relative_to("/tmp") and Path(p) != Path("/tmp"))
    return [p for p in hidden if not any(Path(p).is_relative_to(q) and p != q for q in hidden)]


def _bind_back(libc, kept: int, path: str, flags: int = MS_BIND) -> None:
    """Make a folder (held open as ``kept``) reappear at its own path; a bind of a read-only
    mount stays read-only."""
    os.makedirs(path, mode=0o755, exist_ok=True)
    source = f"/proc/self/fd/{kept}".encode()
    check_call(libc.mount(source, path.encode(), None, flags, None), f"bind {path}")
    os.close(kept)


def _become_pid_one(libc) -> None:
    """Fork into the new PID namespace; the parent waits and exits with the child's status."""
    child = os.fork()
    if child == 0:
        check_call(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
        return
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda number, _frame: os.kill(child, number))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _drop_capabilities(libc) -> None:
    """No capability left, none to regain: bounding set emptied, then all sets cleared."""
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        check_call(libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap}")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    check_call(libc.capset(ctypes.byref(header), data), "capset")
