"""A deterministic queue of device work on virtual time, for checks of timing code.

Code that times a GPU must wait for the device before it reads the clock. A check hands
the learner's timer a :class:`VirtualQueue`'s ``work``, ``synchronize`` and ``clock``:
its clocks move only by launches and waits, so whether the timer waited, and what it
measured, is the same on every machine and every run. Lessons 06 and 08 judge timers so.

This module runs beside learner code; it calls nothing of the learner's.
"""

from __future__ import annotations

from autograder.common import trusted

_LAUNCH_S = 1e-5  # host time of one launch in the virtual queue


class VirtualQueue:
    """A check's deterministic queue: virtual host time, work that finishes later.

    ``work`` costs the host a launch and puts its duration on the device;
    ``synchronize`` moves host time to the end of the device's work (plus its own cost,
    where a check gives it one); ``clock`` reads host time. Every call is logged in order,
    and the methods below read what a timer did from that log.
    """

    def __init__(self, durations: list[float], start: float, busy: float, sync_s: float = 0.0):
        self.durations, self.log, self.reads = durations, [], []
        self.sync_s = sync_s  # host time a synchronize() itself takes, after the wait
        self.host, self.device_free = start, start + busy
        self.calls = 0

    def work(self) -> None:
        self.log.append("work")
        self.host += _LAUNCH_S
        duration = self.durations[min(self.calls, len(self.durations) - 1)]
        self.calls += 1
        self.device_free = max(self.host, self.device_free) + duration

    def synchronize(self) -> None:
        self.log.append("sync")
        self.host = max(self.host, self.device_free) + self.sync_s

    def clock(self) -> float:
        self.log.append("clock" if self.host >= self.device_free else "clock, busy")
        self.reads.append(self.host)
        return self.host

    # What a timer did, read from the log --------------------------------------------------

    def intervals(self) -> list[float]:
        """The durations between two consecutive clock reads with exactly one work() between."""
        found, works, k = [], None, -1
        for entry in self.log:
            if entry == "work" and works is not None:
                works += 1
            elif entry.startswith("clock"):
                k += 1
                if works == 1:
                    found.append(self.reads[k] - self.reads[k - 1])
                works = 0
        return found

    def warmups_timed(self, warmup: int) -> int:
        """Warm-up calls of work() (the first ``warmup``) alone between two clock reads."""
        timed, count, between, started = 0, 0, [], False
        for entry in self.log:
            if entry == "work":
                between.append(count)
                count += 1
            elif entry.startswith("clock"):
                timed += started and len(between) == 1 and between[0] < warmup
                between, started = [], True
        return timed

    def works_before_first_read(self) -> int:
        """Calls of work() before the clock was first read (warm-up that nobody timed)."""
        reads = [k for k, entry in enumerate(self.log) if entry.startswith("clock")]
        return self.log[: reads[0] if reads else len(self.log)].count("work")

    def first_read_busy(self) -> bool:
        """The first clock read came while work was still queued."""
        return next((e for e in self.log if e.startswith("clock")), None) == "clock, busy"


def is_mean(value, intervals: list[float]) -> bool:
    """A timer's figure is the mean of its intervals (a mistake where it is not also their
    median: a single slow interval moves a mean)."""
    if trusted.type_(value) is not float or not intervals:
        return False
    mean = sum(intervals) / len(intervals)
    return abs(value - mean) <= 1e-9 * abs(mean) + 1e-15


def is_median(value, intervals: list[float]) -> bool:
    """A timer's figure is exactly the median of its own (odd count of) intervals."""
    if trusted.type_(value) is not float or len(intervals) % 2 == 0:
        return False
    return value == sorted(intervals)[len(intervals) // 2]
