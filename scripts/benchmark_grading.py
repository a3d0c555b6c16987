"""Grade the same class with `course-grade grade` and with plain `nbgrader autograde`.

Prints the wall time of each, their ratio, and the fixed cost per submission:
worker-seconds spent on a submission beyond its learner cells (the cells after
the setup cell, as timed by the kernel in plain nbgrader's run). Run it on an
otherwise idle machine:

    .venv/bin/python scripts/benchmark_grading.py [--lesson 01_requires_grad] [--workers N]

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", default="01_requires_grad")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="grading-benchmark-"))
    try:
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
        t_ours = run(
            str(BIN / "course-grade"),
            "grade",
            str(ours),
            args.lesson,
            "--workers",
            str(args.workers),
            "--cell-timeout",
            TIMEOUT,
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
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
