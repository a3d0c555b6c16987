"""The zygote: one process per grading run that imports everything once and forks kernels.

Starting Python, importing torch, IPython and the course for every kernel and
every observer was most of what grading a submission cost. The zygote runs in
a bubblewrap sandbox (started by ``forked.Zygote``), imports all of that before
any learner code exists, and then only forks: for each request the grader
sends on the control socket (standard input: a JSON request, the child's own
channel socket and the log of the worker that asks), a child

1. says "ready" on its channel, so the grader learns its PID and moves it into
   the submission's cgroup, and waits for the go-ahead;
2. confines itself (``isolate.enter``: fresh namespaces, scratch, /proc,
   no capabilities, Landlock), then joins a fresh session keyring and loads the
   seccomp filter the zygote built once (``seccomp_filter``);
3. becomes an IPython kernel on the given connection file, or the verdict
   observer (``autograder.kernel.observer``), which reads its job from the
   channel and writes its blob back.

The zygote never runs learner code, and none of its children can reach it: they
live in PID namespaces of their own, it is not dumpable, and they hold neither
its control socket nor each other's channels.

Run as ``python -s -P -m autograder.grader.sandbox.zygote`` inside the sandbox.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import pkgutil
import re
import signal
import socket
import sys
import traceback
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by main(): the grader, which imports GO and READY, needs no libseccomp
    from autograder.grader.sandbox.seccomp_filter import Filter

PR_SET_DUMPABLE = 4
MAX_REQUEST = 1 << 16
READY, GO = b"R", b"G"
# The environment variable that names the lessons whose shipped states the zygote decodes.
SHIPPED_STATES = "COURSE_SHIPPED_STATES"
# Set (to 1) where the zygote will fork enough children to move its memory into huge pages.
HUGE_PAGES = "COURSE_HUGE_PAGES"
PRELOADED = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torchvision",
    "numpy",
    "matplotlib",
    "matplotlib.pyplot",
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.debugger",  # a kernel imports it (debugpy) while it starts: 0.25 s a fork
    "autograder",
    "autograder.kernel.observer",
)


def preload() -> None:
    """Import what kernels and observers import, so that every fork starts with it."""
    import autograder.kernel
    import autograder.lessons

    for name in PRELOADED:
        importlib.import_module(name)
    for package in (autograder.kernel, autograder.lessons):
        for module in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{module.name}")
    from autograder.kernel.fonts import use_cjk_font

    use_cjk_font()  # matplotlib's font list, built once here, not in every kernel
    preload_shipped_states(os.environ.get(SHIPPED_STATES, "").split())


def preload_shipped_states(lessons: list[str]) -> None:
    """Decode the shipped states of the lessons this run grades (``lesson03``, ...), which a
    kernel's first check cell otherwise decodes for itself: about 0.25 s of every lesson 03
    kernel. They are the course's public data, which every learner kernel reads anyway."""
    from autograder.common import expectations

    for lesson in lessons:
        if re.fullmatch(r"lesson\d\d", lesson):
            expectations.load(lesson)


def serve(control: socket.socket, syscalls: Filter) -> None:
    """Fork one confined child per request until the grader closes the control socket."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, MAX_REQUEST, 2)
        except InterruptedError:
            continue
        if not message:
            return
        if os.fork() == 0:
            _child(json.loads(message), fds, control, syscalls)
        for fd in fds:
            os.close(fd)


def _child(request: dict, fds: list[int], control: socket.socket, syscalls: Filter) -> None:
    """In the forked child: report, wait to be placed, confine, then run; never returns.

    ``fds``: its channel, then the log of the worker that asked for it, which becomes its
    fd 2 (the zygote serves every worker of a run; each reads only its own children's
    errors)."""
    channel_fd, log_fd = fds
    try:
        os.dup2(log_fd, 2)
        os.close(log_fd)
        # A session (and process group) of its own: learner code that kills its group
        # (os.killpg(0, 9)) ends only this child, not the zygote and its other children.
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        control.close()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1):
            os.dup2(devnull, fd)
        os.closerange(3, channel_fd)
        os.closerange(channel_fd + 1, 1 << 16)
        channel = socket.socket(fileno=channel_fd)
        channel.sendall(READY)
        payload = _read_all(channel)
        if not payload.startswith(GO):
            os._exit(3)
        from autograder.grader.sandbox import seccomp_filter
        from autograder.grader.sandbox.isolate import Isolation, enter

        enter(Isolation(**request["isolation"]))
        seccomp_filter.enter(syscalls)  # last: isolating needed unshare and mount
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        _fresh_random_state()
        if request["kind"] == "kernel":
            channel.close()
            _run_kernel(request["connection_file"], request.get("threads", 0))
        else:
            _run_observer(json.loads(payload[1:]), channel)
    except BaseException:
        traceback.print_exc()
        os._exit(4)
    os._exit(0)


def _read_all(channel: socket.socket) -> bytes:
    chunks = []
    while chunk := channel.recv(1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _fresh_random_state() -> None:
    """Draw new seeds, as a fresh interpreter would (Python's ``random`` reseeds itself)."""
    import numpy
    import torch

    numpy.random.seed(int.from_bytes(os.urandom(4), "little"))
    torch.seed()


def _run_kernel(connection_file: str, threads: int) -> None:
    import matplotlib
    import torch
    from ipykernel.kernelapp import IPKernelApp

    # A fresh kernel draws figures inline because ipykernel sets $MPLBACKEND before anything
    # imports matplotlib; here matplotlib was imported by the zygote, so the kernel's choice
    # is made the same way through rcParams (the backend loads at the first figure, as there).
    matplotlib.rcParams["backend"] = "module://matplotlib_inline.backend_inline"
    if threads:
        torch.set_num_threads(threads)
    sys.argv = ["ipykernel_launcher", "-f", connection_file]
    app = IPKernelApp.instance()
    # Until learner code can run, fd 2 is its worker's log, where a kernel that cannot start
    # says why; ipykernel keeps a copy of fd 2, so from here on it is /dev/null.
    log = os.dup(2)
    os.dup2(0, 2)
    try:
        app.initialize(sys.argv[1:])
    except BaseException:
        os.dup2(log, 2)
        raise
    os.close(log)
    app.start()


def _run_observer(job: dict, channel: socket.socket) -> None:
    from autograder.kernel import observer

    # fd 2 stays its worker's log, for the observer's own failures: it runs no learner code,
    # and its children point fd 1 and 2 at their own log before they do.
    os.dup2(channel.fileno(), 1)  # the one way out; the observer's children cannot use it
    channel.close()
    observer.serve(job, os.fdopen(1, "wb"))


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    from autograder.grader.sandbox import huge_pages, seccomp_filter

    syscalls = seccomp_filter.build()
    preload()
    # Out of the garbage collector's sight: the ~420,000 objects every fork inherits. A full
    # collection in a kernel or an observer otherwise walks them all (0.2 s each time, and
    # writing to each object's header copies its page), a few times per submission.
    gc.freeze()
    if os.environ.get(HUGE_PAGES):  # after the last allocation worth sharing
        huge_pages.collapse()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    serve(control, syscalls)


if __name__ == "__main__":
    main()
