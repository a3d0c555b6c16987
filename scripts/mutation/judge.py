"""Judge one answer in self-study mode, in a forked child that is bounded in time and memory.

The child runs the answer cell and then the exercise's test cell (visible and hidden
checks) in a fresh namespace, as ``tests/test_lesson_checks.py`` does with the references
imported in-process. Forking keeps each answer's leftovers (a global setting a mutant
leaves changed, a hook, a monkey-patch) out of the next one, and costs milliseconds
where a fresh interpreter costs seconds of importing torch. A mutant that loops or
allocates without end is stopped: its address space is capped with ``setrlimit`` and the
parent kills that one child, by its pid, when the time is up.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import select
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PASSED, FAILED, TIMEOUT, CRASHED = "passed", "failed", "timeout", "crashed"


@dataclass(frozen=True)
class Verdict:
    """What the test cell said of one answer, and how long it took."""

    outcome: str  # PASSED, FAILED (a check failed or the cell raised), TIMEOUT or CRASHED
    detail: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.outcome == PASSED


def prepare() -> None:
    """Set up this process as the parent of every judged child: imports done once, one thread.

    The references are imported so that the checks compare with the trusted answers
    in-process, as the project's tests do. One torch thread keeps the fork safe (no
    OpenMP pool to inherit) and shares the machine's cores politely.
    """
    os.environ.setdefault("COURSE_DEVICE", "cpu")
    os.environ.setdefault("COURSE_LANG", "en")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if str(REPO / "tests") not in sys.path:
        sys.path.insert(0, str(REPO / "tests"))
    import lesson_cells  # noqa: F401 - imported here so that no child imports it after fork
    import torch

    import autograder.common.result  # noqa: F401
    import autograder.references  # noqa: F401 - registers every reference with the oracle

    torch.set_num_threads(1)


def judge(
    code: str,
    tests: str,
    timeout: float = 60.0,
    memory_mb: int = 2048,
    salt: int = 0,
    split: bool = False,
) -> Verdict:
    """Run ``code``, then ``tests``, in a forked child: ``timeout`` s, ``memory_mb`` MiB more.

    ``salt`` moves the hidden tests' seeds as grading moves them for a submission: other
    salts draw other inputs, so a mutant that survives many is hard to tell from the answer.
    ``split``: judge as grading does instead of as the learner's kernel does: observe the
    test cell's checks, round-trip the record through the wire format, judge it.
    """
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child never returns
        os.close(read_end)
        _child(code, tests, memory_mb, write_end, salt, split)
    os.close(write_end)
    try:
        return _collect(pid, read_end, timeout, start)
    finally:
        os.close(read_end)


def _child(code: str, tests: str, memory_mb: int, channel: int, salt: int, split: bool) -> None:
    gc.freeze()  # what the parent holds: the child's full collections need not walk it
    try:
        _quiet()
        _cap_memory(memory_mb)
        _threads_as_in_a_kernel()
        outcome, detail = (_run_split if split else _run)(code, tests, salt)
        os.write(channel, json.dumps([outcome, detail]).encode())
    finally:
        os._exit(0)


def _threads_as_in_a_kernel() -> None:
    """One torch thread (safe after the fork) that learner code reads as a kernel's count."""
    import torch

    from autograder.common import global_state

    torch.set_num_threads(1)
    global_state.pretend_kernel_threads()


def _quiet() -> None:
    """The checks print a line per passed check: not wanted in a table of hundreds."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def _cap_memory(memory_mb: int) -> None:
    """Allow this much address space on top of what the parent already maps."""
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    limit = mapped + memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _run(code: str, tests: str, salt: int) -> tuple[str, str]:
    from lesson_cells import run

    from autograder.common import hidden_tests
    from autograder.common.result import CheckFailed

    try:
        namespace = run(code)
        hidden_tests.run(tests, salt, lambda piece: run(piece, namespace))
    except CheckFailed as failure:
        return FAILED, _first_lines(str(failure))
    except BaseException as error:  # noqa: BLE001 - any exception kills the mutant
        return FAILED, f"{type(error).__name__}: {_first_lines(str(error))}"
    return PASSED, ""


def _run_split(code: str, tests: str, salt: int) -> tuple[str, str]:
    from autograder.common import protocol
    from autograder.grader.pipeline.judge import judge_cell
    from autograder.kernel.observer import observe_cell

    try:
        observations = observe_cell(["import torch", code], tests, salt=salt)
        record = {"status": "ok", "observations": observations}
        protocol.MODE.reset()
        verdict = judge_cell(tests, protocol.from_bytes(protocol.to_bytes(record)), "en", salt=salt)
    except BaseException as error:  # noqa: BLE001 - a record that cannot be judged earns nothing
        return FAILED, f"{type(error).__name__}: {_first_lines(str(error))}"
    return (PASSED, "") if verdict.passed else (FAILED, _first_lines(verdict.feedback))


def _first_lines(text: str, count: int = 3) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[:count])[:400]


def _collect(pid: int, channel: int, timeout: float, start: float) -> Verdict:
    chunks: list[bytes] = []
    deadline = start + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return Verdict(TIMEOUT, f"still running after {timeout:g} s", time.monotonic() - start)
        if select.select([channel], [], [], left)[0]:
            data = os.read(channel, 1 << 16)
            if not data:
                break
            chunks.append(data)
    _, status = os.waitpid(pid, 0)
    seconds = time.monotonic() - start
    if not chunks:
        return Verdict(CRASHED, _exit_reason(status), seconds)
    outcome, detail = json.loads(b"".join(chunks))
    return Verdict(outcome, detail, seconds)


def _exit_reason(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"the child died of signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"the child exited with status {os.WEXITSTATUS(status)} before answering"
