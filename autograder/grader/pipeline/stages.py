"""Where a submission's grading time goes: wall seconds per stage, in the grading process.

``worker.grade`` starts a fresh table per submission; each stage (staging the files, the
zygote, reading the notebook for the policy, the learner's run in the kernel, waiting for
the observer, the judge, the rest of nbgrader's autograde, cleaning up) adds to it, and the
table is saved in the submission's record (``GradeRecord.stages``).
``scripts/benchmark_grading.py`` sums the records into the breakdown the README shows.
One worker grades one submission at a time, so one table per process is enough.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

_taken: dict[str, float] = {}


def reset() -> None:
    _taken.clear()


def add(stage: str, seconds: float) -> None:
    _taken[stage] = _taken.get(stage, 0.0) + seconds


@contextlib.contextmanager
def timed(stage: str) -> Iterator[None]:
    started = time.monotonic()
    try:
        yield
    finally:
        add(stage, time.monotonic() - started)


def taken() -> dict[str, float]:
    """The table so far, in milliseconds' precision."""
    return {stage: round(seconds, 3) for stage, seconds in _taken.items()}
