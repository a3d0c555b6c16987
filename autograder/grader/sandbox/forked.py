"""The grader's side of the zygote: start it once per run, ask it for confined children.

A child is placed in the submission's cgroup before it runs anything of the
learner's: it reports on its channel, the grader reads its PID (the kernel
translates it into the grader's PID namespace, ``SO_PASSCRED``), writes that
PID into the cgroup and only then sends the go-ahead. The grader holds a pidfd
of each child to poll, wait for and signal it without races.

A local run starts one zygote before it forks its workers (``start_early``), and
every worker asks that one: a zygote imports torch and the course (some 3 CPU
seconds), and a second one per run only repeated it. Each child writes its errors
to the log of the worker that asked for it, so a worker reads only its own.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import multiprocessing.util
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.grader.sandbox.bwrap import SCRATCH, Confinement, sandbox_argv, shown_paths
from autograder.grader.sandbox.cgroups import Cgroup
from autograder.grader.sandbox.isolate import Isolation
from autograder.grader.sandbox.zygote import GO, HUGE_PAGES, READY, SHIPPED_STATES

ZYGOTE = [sys.executable, "-s", "-P", "-m", "autograder.grader.sandbox.zygote"]
START_TIMEOUT_S = 120
READY_TIMEOUT_S = 30
UCRED = struct.Struct("iII")  # pid, uid, gid


class ZygoteError(RuntimeError):
    """The zygote could not be started or did not answer."""


class Forked:
    """A child of the zygote, seen from the grader: enough of ``Popen`` for jupyter_client."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int, channel: socket.socket):
        self.pid, self.channel = pid, channel
        self.pidfd = os.pidfd_open(pid)
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """None while it runs; its exit is not ours to reap, so a finished child reads -9."""
        if self.returncode is None and select.select([self.pidfd], [], [], 0)[0]:
            self.returncode = -9
            os.close(self.pidfd)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(f"zygote child {self.pid}", timeout)
            select.select([self.pidfd], [], [], left)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            signal_pidfd(self.pidfd, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def signal_pidfd(pidfd: int, signum: int) -> None:
    """Signal through the pidfd, so a reused PID is never hit."""
    try:
        signal.pidfd_send_signal(pidfd, signum)
    except ProcessLookupError:
        pass


class Zygote:
    """A run's (or a Dask worker's) zygote: a sandboxed process that has imported torch and
    the course."""

    def __init__(
        self,
        confinement: Confinement,
        threads: int = 0,
        cgroups: bool = True,
        wait: bool = True,
        lessons: tuple[str, ...] = (),
        huge_pages: bool = False,
    ):
        self.confinement = confinement
        self.key = (confinement, threads, cgroups)
        folder, lock = _zygote_folder()
        self.folder = folder
        self.spool, self.log = folder / "spool", folder / "zygote.log"
        self.spool.mkdir()
        if confinement.bubblewrap and confinement.uid is not None:
            folder.chmod(0o711)  # the sandbox's user passes through to its spool
            os.chown(self.spool, confinement.uid, confinement.uid)
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv = sandbox_argv(
            ZYGOTE,
            self.spool,
            _zygote_confinement(confinement, cgroups),
            env=zygote_env(threads, lessons, huge_pages),
            sockets=True,
            keep_capabilities=True,
        )
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(argv, stdin=theirs, stdout=subprocess.PIPE, stderr=log)
        theirs.close()
        # Its liveness and its end go through a pidfd: they work in a worker forked after
        # the zygote started too (``take_early``), where it is not a child to wait for.
        self.pidfd = os.pidfd_open(self.process.pid)
        self._ends = (self.control, self.process, self.pidfd, folder, lock)
        self._ready = False
        self._own_end()
        if wait:
            self.wait_ready()

    def _own_end(self) -> None:
        """End it when this process ends. A finalizer, not atexit: pool workers leave through
        multiprocessing, which skips atexit but runs these (and forgets the finalizers of
        the process they were forked from). A worker ended by a signal leaves its folder to
        the next zygote's sweep."""
        self.stop = multiprocessing.util.Finalize(self, _stop, self._ends, exitpriority=0)

    def wait_ready(self) -> None:
        """Until it has imported what its children need (at once after the first time)."""
        if self._ready:
            return
        if not _line_within(self.process.stdout, START_TIMEOUT_S).startswith(b"ready"):
            said = self.log.read_text(errors="replace").strip().splitlines()[-3:]
            self.stop()
            raise ZygoteError(f"the grading zygote did not start: {' / '.join(said)}")
        self._ready = True

    def __deepcopy__(self, memo) -> Zygote:
        """A handle on one running process: traitlets' config copies share it."""
        return self

    def alive(self) -> bool:
        """Running, and not yet ended by this process (whose ``stop`` closed the pidfd)."""
        return self.stop.still_active() and not select.select([self.pidfd], [], [], 0)[0]

    def children_log(self) -> Path:
        """Where the children this process asks for write their errors: one file per worker
        process (a worker grades one submission at a time)."""
        return self.folder / f"children-{os.getpid()}.log"

    def log_mark(self) -> int:
        """Where this worker's children's log ends now; what they write after it is read
        with ``last_error``."""
        try:
            return self.children_log().stat().st_size
        except OSError:
            return 0

    def last_error(self, since: int = 0) -> str:
        """The last error a child of this worker wrote after ``since`` ("" if none): which
        child (kernel, observer) and its exception's line."""
        try:
            with self.children_log().open("rb") as log:
                log.seek(max(since, self.log_mark() - LOG_TAIL))
                text = log.read(LOG_TAIL).decode(errors="replace")
        except OSError:
            return ""
        return last_error(text)

    def workdir(self) -> Path:
        """A fresh socket folder for one kernel, inside the spool the zygote sees."""
        folder = Path(tempfile.mkdtemp(prefix="kernel-", dir=self.spool))
        if self.confinement.bubblewrap and self.confinement.uid is not None:
            os.chown(folder, self.confinement.uid, self.confinement.uid)
        return folder

    def fork(
        self,
        kind: str,
        cgroup: Cgroup | None,
        env: dict[str, str],
        *,
        sockets: Path | None = None,
        payload: bytes = b"",
        **extra,
    ) -> Forked:
        """A confined child in ``cgroup``, started with ``payload`` on its channel."""
        limits = self.confinement.limits
        isolation = Isolation(
            namespaces=self.confinement.bubblewrap,
            landlock=self.confinement.landlock,
            scratch_bytes=limits.scratch_bytes,
            shm_bytes=limits.shm_bytes,
            spool=str(self.spool),
            sockets=str(sockets) if sockets else None,
            readable=tuple(inside for _, inside in shown_paths(self.confinement)),
        )
        request = {"kind": kind, "isolation": dataclasses.asdict(isolation), "env": env, **extra}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        log = os.open(
            self.children_log(), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600
        )
        try:
            message = [json.dumps(request).encode()]
            socket.send_fds(self.control, message, [theirs.fileno(), log])
        except OSError as error:
            raise ZygoteError(f"the grading zygote is gone: {error}") from None
        finally:
            theirs.close()
            os.close(log)
        pid = _ready_pid(ours)
        child = Forked(pid, ours)
        try:
            if cgroup is not None:
                for procs in cgroup.procs_files():
                    Path(procs).write_text(str(pid))
            ours.sendall(GO + payload)
            ours.shutdown(socket.SHUT_WR)
        except OSError:
            child.kill()
            raise
        return child


def _stop(
    control: socket.socket, process: subprocess.Popen, pidfd: int, folder: Path, lock: int
) -> None:
    """End a zygote (its children die with it) and remove its folder; runs once. Where it
    is not this process's child, ``wait`` returns at once: the process that started it
    reaps it."""
    control.close()
    signal_pidfd(pidfd, signal.SIGKILL)
    process.wait()
    os.close(pidfd)
    shutil.rmtree(folder, ignore_errors=True)
    os.close(lock)


FOLDER_PREFIX = "course-zygote-"
SWEEP_AFTER_S = 60  # younger folders may still be taking their lock


def _zygote_folder() -> tuple[Path, int]:
    """A fresh folder for one zygote's spool and log, locked for as long as this process
    holds it; first, the folders nobody holds any more are removed (a grading worker
    ended by a signal runs no clean-up). A lock, not a PID, tells: it works across PID
    namespaces and is released by the kernel when its holder dies."""
    for folder in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*"):
        _remove_if_abandoned(folder)
    folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
    lock = os.open(folder / "lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    return folder, lock


def _remove_if_abandoned(folder: Path) -> None:
    try:
        if time.time() - folder.lstat().st_mtime < SWEEP_AFTER_S:
            return
        lock = os.open(folder / "lock", os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:  # not a zygote's folder, or another user's
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # its worker is alive
        return
    finally:
        os.close(lock)
    shutil.rmtree(folder, ignore_errors=True)


LOG_TAIL = 64 * 1024  # bytes of the log read for an error
MAX_REASON = 300
KERNEL, OBSERVER, CONFINING = "the kernel", "the observer", "confining a child"
CHILDREN = {"_run_kernel": KERNEL, "_run_observer": OBSERVER, "enter": CONFINING}


def last_error(text: str) -> str:
    """The final line of the last traceback in ``text`` (else its last line), prefixed with
    the child that raised it where its frames tell."""
    lines = [line for line in text.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")]
    if not starts:
        return lines[-1].strip()[:MAX_REASON] if lines else ""
    block = lines[starts[-1] :]
    final = [line for line in block[1:] if not line.startswith(" ")] or block[-1:]
    who = next((name for key, name in CHILDREN.items() if f"in {key}" in "".join(block)), "")
    return (f"{who}: " if who else "") + final[-1].strip()[:MAX_REASON]


def _line_within(stream, timeout_s: float) -> bytes:
    if not select.select([stream], [], [], timeout_s)[0]:
        return b""
    return stream.readline()


def _ready_pid(channel: socket.socket) -> int:
    """The child's PID in our namespace, from the credentials on its first message."""
    if not select.select([channel], [], [], READY_TIMEOUT_S)[0]:
        raise ZygoteError("a child of the grading zygote did not report")
    data, ancillary, _, _ = channel.recvmsg(1, socket.CMSG_SPACE(UCRED.size))
    for level, kind, value in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and data == READY:
            pid, _, _ = UCRED.unpack(value[: UCRED.size])
            return pid
    raise ZygoteError("a child of the grading zygote reported without credentials")


def _zygote_confinement(confinement: Confinement, cgroups: bool) -> Confinement:
    """The zygote's own sandbox: no Landlock (its children mount first); no address-space
    rlimit where cgroups bound memory (torch's import would not fit under it)."""
    limits = confinement.limits
    if cgroups:
        limits = dataclasses.replace(limits, address_space=False)
    return dataclasses.replace(confinement, cgroup=None, landlock=False, limits=limits)


def zygote_env(
    threads: int, lessons: tuple[str, ...] = (), huge_pages: bool = False
) -> dict[str, str]:
    """What the zygote imports under; its children get their own environment. ``lessons``:
    those whose shipped states it decodes for its kernels (``zygote.preload_shipped_states``);
    ``huge_pages``: whether it moves its memory into huge pages (``huge_pages.collapse``)."""
    env = {"MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{SCRATCH}/.matplotlib"}
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    if lessons:
        env[SHIPPED_STATES] = " ".join(lessons)
    if huge_pages:
        env[HUGE_PAGES] = "1"
    return env


def shipped_lessons(assignments: list[str]) -> tuple[str, ...]:
    """The shipped states' names of the course's lessons among ``assignments``
    ("03_eval_vs_no_grad" -> "lesson03"); other assignments have none."""
    numbers = {name[:2] for name in assignments if name[:2].isdigit() and name[2:3] == "_"}
    return tuple(f"lesson{number}" for number in sorted(numbers))


_ZYGOTES: dict[tuple[Confinement, int, bool], Zygote] = {}


def _key(confinement: Confinement, threads: int, cgroups: bool) -> tuple[Confinement, int, bool]:
    return dataclasses.replace(confinement, cgroup=None), threads, cgroups


def zygote_for(
    confinement: Confinement, threads: int, cgroups: bool, lessons: tuple[str, ...] = ()
) -> Zygote:
    """This worker's zygote for these limits, started on first use and after it died
    (decoding the shipped states of ``lessons`` when it starts). A worker that starts its
    own (a Dask worker) grades many submissions with it: its memory goes into huge pages."""
    key = _key(confinement, threads, cgroups)
    found = _ZYGOTES.get(key)
    if found is not None and found.alive():
        try:
            found.wait_ready()
        except ZygoteError:  # it stopped itself: the next call starts another
            del _ZYGOTES[key]
            raise
        return found
    if found is not None:
        found.stop()
    found = _ZYGOTES[key] = Zygote(*key, lessons=lessons, huge_pages=True)
    return found


_EARLY: list[Zygote] = []  # started by start_early, for the workers about to be forked


def start_early(
    confinement: Confinement,
    threads: int,
    cgroups: bool,
    lessons: tuple[str, ...] = (),
    huge_pages: bool = False,
) -> None:
    """Start the run's zygote now, without waiting for it, for the worker processes forked
    from this one later to share (``take_early``). Its imports of torch and the course
    then run while this process still imports nbgrader and the judge, instead of after it."""
    end_early()
    key = _key(confinement, threads, cgroups)
    _EARLY[:] = [Zygote(*key, wait=False, lessons=lessons, huge_pages=huge_pages)]


def wait_early() -> None:
    """Before forking the workers: wait until the early zygote is ready, so that each of them
    starts with it ready (only one process can read its "ready"). One that failed is ended:
    the workers then start their own, and the first submission or the start-up probe says
    why."""
    for zygote in list(_EARLY):
        try:
            zygote.wait_ready()
        except ZygoteError:
            _EARLY.remove(zygote)


def take_early() -> None:
    """In a worker forked after ``start_early``: use the run's zygote as this worker's. Only
    the process that started it ends it (``end_early``): a worker that ends lets go of its
    copies of the zygote's handles, and the others keep using it."""
    for zygote in _EARLY:
        handles = (zygote.control, zygote.pidfd)
        zygote.stop = multiprocessing.util.Finalize(zygote, _let_go, handles, exitpriority=0)
        _ZYGOTES[zygote.key] = zygote
    _EARLY.clear()


def _let_go(control: socket.socket, pidfd: int) -> None:
    """A worker's end of a zygote it shares: close its copies, leave the zygote running."""
    control.close()
    os.close(pidfd)


def end_early() -> None:
    """In the process that called ``start_early``, once its workers are done: end the early
    zygote."""
    for zygote in _EARLY:
        zygote.stop()
    _EARLY.clear()
