"""Run grading tasks in parallel: local worker processes, or a Dask cluster.

Each local worker process lives for many submissions, so Python, nbgrader and
the course package are imported once per worker, not once per submission.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.grader.pipeline.records import GradeRecord
from autograder.grader.sandbox import forked

if TYPE_CHECKING:
    from autograder.grader.pipeline.worker import Task


class Progress:
    """A one-line progress bar with an ETA, written to stderr."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.stream = total, 0, stream
        self.started = time.monotonic()

    def advance(self, label: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done)
        filled = int(30 * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (30 - filled)
        line = (
            f"[{bar}] {self.done}/{self.total}  elapsed {elapsed:5.0f} s  ETA {eta:5.0f} s  {label}"
        )
        end = "\r" if self.stream.isatty() and self.done < self.total else "\n"
        print(line.ljust(100), end=end, file=self.stream, flush=True)


def pool_size(workers: int, tasks: int) -> int:
    """How many local worker processes grade ``tasks`` submissions: never more than tasks."""
    return max(1, min(workers, tasks))


def default_workers() -> int:
    """One worker per core."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def kernel_threads(workers: int) -> int:
    """CPU threads for each kernel and each observer of a local run with ``workers`` workers.

    A submission's kernel and its observer run at the same time, so a worker's share of the
    cores is theirs together. An OpenMP thread that waits for a core spins: with one worker
    on two cores, giving each of them both cores took twice the CPU time and 1.7 times the
    wall time of one thread each (42 submissions of lessons 01 and 03: 90.9 busy
    core-seconds and 55 s, against 40.8 and 32 s).
    """
    return max(1, default_workers() // (2 * max(workers, 1)))


class NotReady(RuntimeError):
    """Grading cannot work here (the start-up probe says why); nothing was graded."""


def _started() -> None:
    """Nothing: submitted once per worker so that every worker starts (and warms) now."""


def run_local(
    tasks: list[Task],
    workers: int,
    on_done: Callable[[list[GradeRecord]], None],
    probe: bool = True,
):
    """Grade tasks in a pool of long-lived worker processes.

    The workers are forked from this process once it has imported what grading needs and
    the run's zygote (``forked.start_early``) is ready; they share it, or start their own
    where there is none (``worker.warm``). With ``probe``, one of them runs the start-up
    probe with its zygote, and no task is handed out before the probe has said grading can
    work here (else ``NotReady``, with its reason).
    """
    from autograder.grader.pipeline.worker import grade, preload, warm
    from autograder.grader.pipeline.worker import probe as start_up_probe

    if not tasks:
        return
    preload()
    forked.wait_early()
    workers = pool_size(workers, len(tasks))
    fork = multiprocessing.get_context("fork")  # the default from Python 3.14 re-imports
    try:
        with ProcessPoolExecutor(workers, fork, initializer=warm, initargs=tasks[:1]) as pool:
            for _ in range(workers):
                pool.submit(_started)
            problem = _probed(pool, start_up_probe, tasks[0]) if probe else None
            if problem:
                pool.shutdown(cancel_futures=True)
                raise NotReady(problem)
            futures = {pool.submit(grade, task): task for task in tasks}
            for future in as_completed(futures):
                on_done(_result(future.result, futures[future]))
    finally:
        forked.end_early()


def _probed(pool: ProcessPoolExecutor, start_up_probe, task: Task) -> str | None:
    """The probe's answer; a worker that died running it is an answer too."""
    try:
        return pool.submit(start_up_probe, task).result()
    except Exception as error:  # BrokenProcessPool: the worker ended (a signal, the OOM killer)
        return f"the start-up probe failed: its worker ended ({type(error).__name__}: {error})"


def run_dask(
    tasks: list[Task],
    address: str,
    on_done: Callable[[list[GradeRecord]], None],
    tls: Path | None = None,
):
    """Grade tasks on a Dask distributed cluster (the scheduler at ``address``); ``tls``: the
    folder of the cluster's certificate (course-classroom cluster), which it requires."""
    from distributed import Client
    from distributed import as_completed as dask_completed

    from autograder.grader.pipeline.worker import grade_on_worker

    security = None
    if tls is not None:
        from autograder.classroom.cluster import security as from_folder

        security = from_folder(tls)
    with Client(address, security=security) as client:
        futures = {client.submit(grade_on_worker, task, pure=False): task for task in tasks}
        for future in dask_completed(futures):
            on_done(_result(future.result, futures[future]))


def _result(get: Callable[[], list[GradeRecord]], task: Task) -> list[GradeRecord]:
    """The worker's records; a worker that itself failed becomes an 'error' record."""
    try:
        return get()
    except Exception as error:  # the worker process died or raised: record it, keep going
        from autograder.grader import reasons
        from autograder.grader.pipeline import records, submission

        root = Path(task.course_root)
        what = f"{type(error).__name__}: {error}"[:260]
        reason = reasons.says(
            "grading worker failed: {what}", "评分工作进程失败：{what}", what=what
        )
        failed = [
            GradeRecord(
                task.student, task.assignment, name, "error", **reasons.fields("reason", reason)
            )
            for name in submission.expected_notebooks(root, task.assignment)
        ]
        for record in failed:
            records.save(root, record)
        return failed


def run(
    tasks: Iterable[Task],
    workers: int,
    scheduler: str | None = None,
    tls: Path | None = None,
    probe: bool = True,
) -> list[GradeRecord]:
    """Grade every task, showing progress; return all records. Local workers run the
    start-up probe first (``probe``); ``NotReady`` says why grading cannot work here.
    Dask workers confine with their own paths and cgroup, and are not probed."""
    tasks = list(tasks)
    progress = Progress(len(tasks))
    collected: list[GradeRecord] = []

    def on_done(result: list[GradeRecord]) -> None:
        collected.extend(result)
        summary = ", ".join(f"{r.notebook}: {r.status}" for r in result)
        progress.advance(f"{result[0].student if result else '?'} ({summary})")

    if scheduler:
        run_dask(tasks, scheduler, on_done, tls)
    else:
        run_local(tasks, workers, on_done, probe)
    return collected
