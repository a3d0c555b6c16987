"""The verdict observer: runs a learner's cells and records what the checks see.

The grading zygote forks it, confined, for a submission and gives it a job on
its channel: the top-level statements of the notebook's cells that keep to the
learner-code policy, in notebook order (of the instructor's cells, only their
definitions and the assignments learner code reads), and the test cells to
observe, each with how many statements precede it. Torch and the checks were
imported before any learner code existed; this process forks one child per test
cell, so every exercise is observed in a fresh process that ran only the
statements above its test cell, as a top-to-bottom run of the notebook would.
Each child sends its observations back through its own pipe; its standard
output goes to a log. Only this parent writes to the channel: one blob with every
test cell's record, either its child's bytes as they came (decoded once, by the
grader: ``protocol.cell_record``; decoding and encoding them again here cost 0.1 s a
lesson 03 notebook) or what happened to the child.
"""

from __future__ import annotations

import importlib
import mmap
import os
import pkgutil
import select
import signal
import sys
import time
from typing import Any

import autograder.lessons
from autograder.common import global_state, hidden_tests, protocol

MAX_BLOB = 64 * 1024**2  # bytes one child may send back


def observe_cell(
    statements: list[str],
    test_source: str,
    skipped: set[int] = frozenset(),
    progress=None,
    salt: int = 0,
) -> list[tuple[str, dict]]:
    """Run the statements, then the test cell in observe mode; return the observations.

    Each statement runs on its own: one that fails (as it would have in the notebook)
    leaves its names undefined, and the check that needs them says so. ``skipped``
    statements hung or crashed before; ``progress(k)`` is told which one starts. The
    hidden tests run with the submission's ``salt`` (``hidden_tests``).
    """
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for k, code in enumerate(statements):
        if k in skipped:
            continue
        if progress:
            progress(k)
        try:
            exec(compile(code, f"<learner statement {k}>", "exec"), namespace)  # noqa: S102
        except Exception as error:  # the learner's own error, as in the notebook
            print(f"statement {k} failed: {type(error).__name__}: {error}", file=sys.stderr)
    if progress:
        progress(len(statements))
    protocol.MODE.observe()
    hidden_tests.run(test_source, salt, lambda code: _exec_test(code, namespace))
    return protocol.MODE.recorded


def _exec_test(code: str, namespace: dict) -> None:
    exec(compile(code, "<test cell>", "exec"), namespace)  # noqa: S102 - course code


def _child(
    write_fd: int, log_fd: int, statements: list[str], source: str, skipped, at, salt: int
) -> None:
    """In the forked child: learner code runs here, then the observations go to the pipe.

    ``at`` is memory shared with the parent, where the child notes which statement runs.
    """
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)

    def progress(k: int) -> None:
        at[:4] = k.to_bytes(4, "little")

    try:
        observed = observe_cell(statements, source, skipped, progress, salt)
        blob = protocol.to_bytes({"status": "ok", "observations": observed})
    except BaseException as error:  # the learner's statements or a check could not run
        text = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        blob = protocol.to_bytes({"status": "error", "reason": text[:300], "observations": []})
    view = memoryview(blob)
    while view:
        view = view[os.write(write_fd, view) :]
    os._exit(0)


def _collect(pid: int, read_fd: int, timeout_s: float) -> dict | bytes:
    """Read one child's blob within its time (its bytes, unread); kill it when it runs
    over."""
    chunks, size, deadline = [], 0, time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([read_fd], [], [], max(left, 0))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"status": "timed out", "observations": []}
        chunk = os.read(read_fd, 1 << 20)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_BLOB:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"status": "error", "reason": "observations too large", "observations": []}
        chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return {"status": "crashed", "reason": f"exit status {status}", "observations": []}
    return b"".join(chunks)


def _observe_once(
    job: dict, test: dict, skipped: set[int], log_fd: int, timeout_s: float
) -> tuple[dict | bytes, int]:
    """One child for one test cell: its record (its bytes when it sent some), and the
    statement it was running at the end."""
    at = mmap.mmap(-1, 4)  # shared with the child: the statement it is running
    at[:4] = (2**32 - 1).to_bytes(4, "little")  # none yet
    read_fd, write_fd = os.pipe()
    statements = job["statements"][: test["upto"]]
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _child(write_fd, log_fd, statements, test["source"], skipped, at, int(job.get("salt", 0)))
    os.close(write_fd)
    record = _collect(pid, read_fd, timeout_s)
    os.close(read_fd)
    running = int.from_bytes(at[:4], "little")
    at.close()
    return record, running


def run(job: dict, log_path: str) -> dict:
    """Observe every test cell of the job, each in its own forked child.

    As a kernel does with a cell that runs past its time or dies, a learner statement
    that hangs or crashes a child is dropped, and the test cell is observed again
    without it; the later test cells skip it too. Retries stop where the budget would.
    """
    results, skipped = {}, set()
    deadline = time.monotonic() + float(job.get("budget_s", 0) or float("inf"))
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    for test in job["tests"]:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:  # the notebook's budget is spent: as in the kernel, not run
                record, running = {"status": "timed out", "observations": []}, -1
                break
            timeout_s = min(float(job["timeout_s"]), left)
            record, running = _observe_once(job, test, skipped, log_fd, timeout_s)
            ended = isinstance(record, dict) and record["status"] in ("timed out", "crashed")
            stuck = ended and running < test["upto"]
            room = deadline - time.monotonic() > float(job["timeout_s"])
            if not (stuck and room and running not in skipped):
                break
            skipped.add(running)
        results[test["grade_id"]] = record
    os.close(log_fd)
    return results


def serve(job: dict, out) -> None:
    """Observe the job's test cells and write the one blob to ``out`` (the grader's channel)."""
    if job.get("threads"):
        import torch

        torch.set_num_threads(int(job["threads"]))
    global_state.pretend_kernel_threads()
    for lesson in pkgutil.iter_modules(autograder.lessons.__path__):
        importlib.import_module(f"autograder.lessons.{lesson.name}")  # before any learner code
    out.write(protocol.to_bytes(run(job, job["log"])))
    out.flush()
