"""The checks' own clocks on a real GPU: CUDA events and the host's clock.

Lesson 06 times a learner's function on a GPU against yardsticks of the check's own (a
blocking copy, the computation and the copy alone, the same work timed by events). The
clocks are taken when the checks are imported, before any learner code runs, so an answer
that replaces ``torch.cuda.synchronize`` or ``time.perf_counter`` cannot bend them. Only
called where torch sees a CUDA GPU. This module runs beside learner code.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

synchronize = torch.cuda.synchronize
perf_counter = time.perf_counter
median = statistics.median
_EVENT = torch.cuda.Event


def event_ms(run: Callable) -> tuple[float, object]:
    """``run()`` timed by CUDA events on the current stream (ms, the device idle first), and
    what it returned."""
    begin, end = _EVENT(enable_timing=True), _EVENT(enable_timing=True)
    synchronize()
    begin.record()
    out = run()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end), out


def seconds_in_turns(runs: list[Callable], repeats: int = 7) -> list[tuple[float, float]]:
    """Each run's median host time and median time until its device work is done (s), timed
    in turns, one of each per round and the order alternating: other work on the machine
    (a second kernel, a test run beside it) then slows every run alike."""
    host: list[list[float]] = [[] for _ in runs]
    done: list[list[float]] = [[] for _ in runs]
    for round_ in range(repeats + 1):  # the first round is a warm-up
        order = range(len(runs)) if round_ % 2 == 0 else reversed(range(len(runs)))
        for k in order:
            synchronize()
            start = perf_counter()
            runs[k]()
            host[k].append(perf_counter() - start)
            synchronize()
            done[k].append(perf_counter() - start)
    return [(float(median(h[1:])), float(median(d[1:]))) for h, d in zip(host, done, strict=True)]
