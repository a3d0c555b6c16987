"""A deterministic queue of device work on virtual time, for checks of timing code.

Code that times a GPU must wait for the device before it reads the clock. A check hands
the learner's timer a :class:`VirtualQueue`'s ``work``, ``synchronize`` and ``clock``:
its clocks move only by launches and waits, so whether the timer waited, and what it
measured, is the same on every machine and every run. Lessons 06 and 08 judge timers so.

This module runs beside learner code; it calls nothing of the learner's.
"""

from __future__ import annotations

_LAUNCH_S = 1e-5  # host time of one launch in the virtual queue


class VirtualQueue:
    """A check's deterministic queue: virtual host time, work that finishes later.

    ``work`` costs the host a launch and puts its duration on the device;
    ``synchronize`` moves host time to the end of the device's work (plus its own cost,
    where a check gives it one); ``clock`` reads
    host time. Every call is logged in order.
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
