"""Grade the same class with `course-grade grade` and with plain `nbgrader autograde`.

Prints the wall time of each, their ratio, and the fixed cost per submission:
worker-seconds spent on a submission beyond its learner cells (the cells after
the setup cell, as timed by the kernel in plain nbgrader's run), and where a
submission's time goes, stage by stage (autograder/grader/pipeline/stages.py). With
``--scaling`` it also grades the class with 1 and 2 local workers and with 1 and 2
worker processes of a local Dask cluster (``--scheduler``) and prints submissions
per minute for each (grading across machines: scripts/demo_term.py --machines). With
``--per-lesson`` it grades instead every lesson's class with
`course-grade` alone and prints a row per lesson: where a submission's time goes
differs most by lesson (its demonstrations run in the learner's kernel, its checks in
the observer and the judge). Run it on an otherwise idle machine:

    .venv/bin/python scripts/benchmark_grading.py [--lesson 01_requires_grad] [--workers N]
        [--scaling | --per-lesson]

The class is the demo class without its red-team part, because plain nbgrader
cannot be relied on to finish that part (a loop that swallows KeyboardInterrupt
keeps its kernel busy after the timeout, so every later cell times out too).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat
from load_validate import busy_cpu_s  # scripts beside this one
from local_cluster import dask_cluster, stop

BIN = Path(sys.executable).parent
TIMEOUT = "30"


def run(*command: str, cwd: Path | None = None) -> float:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    return time.perf_counter() - started


def learner_seconds(course: Path, lesson: str) -> float:
    """Kernel-timed seconds of every code cell after the setup cell, over all submissions."""
    total = 0.0
    for path in (course / "autograded").glob(f"*/{lesson}/{lesson}.ipynb"):
        cells = [c for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code"]
        for cell in cells[1:]:
            timing = cell.metadata.get("execution", {})
            if "iopub.execute_input" in timing and "shell.execute_reply" in timing:
                start = datetime.fromisoformat(timing["iopub.execute_input"].rstrip("Z"))
                end = datetime.fromisoformat(timing["shell.execute_reply"].rstrip("Z"))
                total += (end - start).total_seconds()
    return total


def stage_means(course: Path, lesson: str) -> tuple[int, dict[str, float], float]:
    """From `course-grade`'s records: how many, mean wall seconds per submission in each
    stage, and per whole submission."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from autograder.grader.pipeline import records

    found = records.load(course, lesson)
    totals: dict[str, float] = {}
    for record in found:
        for stage, seconds in record.stages.items():
            totals[stage] = totals.get(stage, 0.0) + seconds
    n = max(len(found), 1)
    whole = sum(record.seconds for record in found) / n
    return len(found), {stage: seconds / n for stage, seconds in totals.items()}, whole


def breakdown(course: Path, lesson: str, learner: float) -> None:
    """Mean wall seconds per submission in each stage of `course-grade` (its records)."""
    n, means, whole = stage_means(course, lesson)
    if not n:
        return
    print(f"where a submission's time goes (mean of {n}, worker-s):")
    for stage, seconds in sorted(means.items(), key=lambda item: -item[1]):
        print(f"  {stage:24s}: {seconds:6.3f}")
    print(f"  {'(not in a stage)':24s}: {whole - sum(means.values()):6.3f}")
    print(f"  {'whole submission':24s}: {whole:6.3f}")
    print(f"  {'of which learner cells':24s}: {learner / n:6.3f} (plain nbgrader's kernel timing)")


def grade_once(course: Path, lesson: str, *options: str) -> float:
    """Wall time of one `course-grade grade` of the whole class, from a clean slate."""
    for folder in ("autograded", "feedback", "grading"):
        shutil.rmtree(course / folder, ignore_errors=True)
    return run(str(BIN / "course-grade"), "grade", str(course), lesson, *options)


def scaling(course: Path, lesson: str, n: int) -> None:
    """Submissions per minute with 1 and 2 local workers, and with 1 and 2 worker processes
    of a local Dask cluster (``--scheduler``; twice each: a cluster's worker imports torch,
    nbgrader and the course for its first submission and keeps them for every later
    run), and the cores each run kept busy (busy CPU seconds of the whole machine ÷ wall
    seconds): grading scales with workers as long as it is bound by the CPU, so a run
    that keeps every core busy is as fast as the cores allow, and more machines add
    their cores."""
    rows = []
    for workers in (1, 2):
        before = busy_cpu_s()
        seconds = grade_once(course, lesson, "--workers", str(workers), "--cell-timeout", TIMEOUT)
        label = f"{workers} local worker{'s' if workers > 1 else ''}"
        rows.append((label, seconds, busy_cpu_s() - before))
    for workers in (1, 2):
        address, started = dask_cluster(workers)
        try:
            label = f"{workers} Dask worker process{'es' if workers > 1 else ''}"
            for run_name in ("first run", "again"):  # again: the workers have imported
                before = busy_cpu_s()
                seconds = grade_once(
                    course, lesson, "--scheduler", address, "--cell-timeout", TIMEOUT
                )
                rows.append((f"{label}, {run_name}", seconds, busy_cpu_s() - before))
        finally:
            stop(started)
    for label, seconds, busy in rows:
        print(
            f"{label:37s}: {seconds:6.1f} s, {60 * n / seconds:5.1f} submissions/min, "
            f"{busy:5.1f} busy core-s ({busy / seconds:4.2f} cores busy)"
        )


PER_LESSON_STAGES = ("learner run", "observer wait", "judge", "nbgrader")


def per_lesson(work: Path, workers: int) -> None:
    """Each lesson's class (the demo class without its red-team part) graded on its own:
    submissions, wall seconds, and the mean worker-seconds of a submission by stage."""
    course = work / "course-grade"
    run(str(BIN / "course-grade"), "create", str(course))
    lessons = sorted(p.name for p in (course / "source").iterdir() if p.is_dir())
    head = "".join(f"{stage:>14s}" for stage in PER_LESSON_STAGES)
    print(f"{'lesson':20s}{'n':>4s}{'wall s':>8s}{'per sub.':>10s}{head}{'other':>8s}")
    for lesson in lessons:
        run(str(BIN / "course-grade"), "demo-class", str(course), lesson)
        for student in (course / "submitted").iterdir():
            if student.name.startswith("red_"):
                shutil.rmtree(student / lesson, ignore_errors=True)
        seconds = grade_once(course, lesson, "--workers", str(workers), "--cell-timeout", TIMEOUT)
        n, means, whole = stage_means(course, lesson)
        shown = "".join(f"{means.get(stage, 0.0):14.3f}" for stage in PER_LESSON_STAGES)
        other = whole - sum(means.get(stage, 0.0) for stage in PER_LESSON_STAGES)
        print(f"{lesson:20s}{n:4d}{seconds:8.1f}{whole:10.3f}{shown}{other:8.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default="01_requires_grad")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--scaling", action="store_true", help="also 1 and 2 workers, both kinds")
    parser.add_argument(
        "--per-lesson", action="store_true", help="only course-grade, every lesson's class"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="grading-benchmark-"))
    try:
        if args.per_lesson:
            per_lesson(work, args.workers)
            return
        ours, plain = work / "course-grade", work / "nbgrader"
        run(str(BIN / "course-grade"), "create", str(ours))
        run(str(BIN / "course-grade"), "demo-class", str(ours), args.lesson)
        for student in list((ours / "submitted").iterdir()):
            if student.name.startswith("red_"):
                shutil.rmtree(student)
        shutil.copytree(ours, plain)
        n = len(list((ours / "submitted").iterdir()))
        print(f"{n} submissions of {args.lesson}, {args.workers} workers for course-grade")

        t_plain = run(
            str(BIN / "nbgrader"),
            "autograde",
            args.lesson,
            f"--ExecutePreprocessor.timeout={TIMEOUT}",
            cwd=plain,
        )
        t_ours = grade_once(
            ours, args.lesson, "--workers", str(args.workers), "--cell-timeout", TIMEOUT
        )
        learner = learner_seconds(plain, args.lesson)
        print(f"plain nbgrader autograde : {t_plain:7.1f} s")
        print(f"course-grade grade       : {t_ours:7.1f} s")
        print(f"speed-up                 : {t_plain / t_ours:7.2f}x")
        print(f"learner cells (all)      : {learner:7.1f} s")
        print(
            f"fixed cost / submission  : plain {(t_plain - learner) / n:5.2f} s, "
            f"course-grade {(t_ours * args.workers - learner) / n:5.2f} worker-s"
        )
        breakdown(ours, args.lesson, learner)
        if args.scaling:
            scaling(ours, args.lesson, n)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
