"""Judge every catalogued answer and every solution under many salts, as grading does.

While grading, each hidden check's seed is moved by the submission's salt, so a check
must give every learner the same verdict, whatever inputs the salt draws and however
many threads the observer and the judge each run torch with. This sweep observes
and judges each answer (tests/catalog: RIGHT, and WRONG where the mistake shows on
the CPU; the solutions) the way ``tests/test_lesson_checks.py::_split_verdict`` does,
under N salts drawn from a seed and once more with a different torch thread count in
observe and judge, and prints every verdict that disagrees with the answer's label:
a right answer must pass; a wrong one must fail, naming its misconception ID where it
has one and no ID where it has none.

    .venv/bin/python scripts/salt_sweep.py --lessons 04 05 09 --salts 8 --seed 0
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import random
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # lesson_cells and the answer catalogues
os.environ["COURSE_DEVICE"] = "cpu"
os.environ["COURSE_LANG"] = "en"
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
from lesson_cells import graded_cells  # noqa: E402

from autograder import course  # noqa: E402
from autograder.common import protocol  # noqa: E402
from autograder.grader.pipeline.judge import judge_cell  # noqa: E402
from autograder.kernel.observer import observe_cell  # noqa: E402

SOLUTIONS = REPO / "solutions"
SECONDS_PER_VERDICT = 120  # one observe and judge of one answer; past this it is a miss


@dataclass(frozen=True)
class Answer:
    """One answer to judge: where it belongs, what it is, and what its verdict must be."""

    lesson: str
    grade_id: str
    name: str
    code: str
    right: bool
    misconception: str | None = None


def answers(lessons: list[str] | None) -> list[Answer]:
    """The solutions and the CPU-visible catalogued answers of the chosen lessons."""
    found = []
    for source in course.lesson_sources(SOLUTIONS):
        lesson, number = source.parent.name, source.parent.name.split("_", 1)[0]
        if lessons and number not in lessons:
            continue
        cells = graded_cells(source)
        catalogue = importlib.import_module(f"catalog.lesson{number}")
        for exercise in importlib.import_module(f"autograder.lessons.lesson{number}").EXERCISES:
            grade_id = f"ex{exercise.number}_{exercise.function}"
            found.append(Answer(lesson, grade_id, "(solution)", cells[grade_id].source, True))
            for right in catalogue.RIGHT.get(grade_id, []):
                if "cpu" in right.devices:
                    found.append(Answer(lesson, grade_id, right.name, right.code, True))
            for wrong in catalogue.WRONG.get(grade_id, []):
                if "cpu" in wrong.devices:
                    found.append(
                        Answer(lesson, grade_id, wrong.name, wrong.code, False, wrong.misconception)
                    )
    return found


_TESTS: dict[tuple[str, str], str] = {}


def _test_source(answer: Answer) -> str:
    key = (answer.lesson, answer.grade_id)
    if key not in _TESTS:
        cells = graded_cells(SOLUTIONS / answer.lesson / f"{answer.lesson}.ipynb")
        _TESTS.update({(answer.lesson, g[: -len("_tests")]): c.source for g, c in cells.items()})
    return _TESTS[key]


def _timeout(signum, frame):
    raise TimeoutError(f"no verdict within {SECONDS_PER_VERDICT} s")


def verdict(answer: Answer, salt: int, threads: tuple[int, int]):
    """Observe with ``threads[0]`` torch threads, judge with ``threads[1]``, as grading does."""
    signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(SECONDS_PER_VERDICT)
    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
    try:
        with quiet[0], quiet[1]:  # what learner code prints is not the sweep's report
            return _verdict(answer, salt, threads)
    finally:
        signal.alarm(0)
        torch.set_num_threads(1)


def _verdict(answer: Answer, salt: int, threads: tuple[int, int]):
    torch.set_num_threads(threads[0])
    try:
        observations = observe_cell(["import torch", answer.code], _test_source(answer), salt=salt)
    finally:
        protocol.MODE.reset()
    blob = protocol.from_bytes(protocol.to_bytes({"status": "ok", "observations": observations}))
    torch.set_num_threads(threads[1])
    return judge_cell(_test_source(answer), blob, "en", salt=salt)


def disagreement(answer: Answer, result) -> str | None:
    """Why the verdict contradicts the label, or None where it agrees."""
    if answer.right:
        return None if result.passed else "right answer fails"
    if result.passed:
        return "wrong answer passes"
    named = set(result.misconceptions)
    if answer.misconception and answer.misconception not in named:
        return f"fails without {answer.misconception} (names {sorted(named) or 'no ID'})"
    if not answer.misconception and named:
        return f"fails naming {sorted(named)}, where it has no ID"
    return None


def sweep_one(answer: Answer, salts: list[int], threads: list[tuple[int, int]]) -> list[str]:
    """Every disagreement of one answer: each salt with equal threads, then the first salt
    under each pair of differing thread counts."""
    runs = [(salt, (1, 1)) for salt in salts] + [(salts[0], pair) for pair in threads]
    lines = []
    for salt, pair in runs:
        try:
            result = verdict(answer, salt, pair)
            why = disagreement(answer, result)
            detail = result.feedback.strip().splitlines()[-1][:200] if why else ""
        except Exception as error:  # a sweep that crashes on one answer goes on with the rest
            why, detail = "no verdict", f"{type(error).__name__}: {error}"[:200]
        if why:
            lines.append(
                f"{answer.lesson} {answer.grade_id} | {answer.name} | salt {salt}"
                f" threads {pair[0]}/{pair[1]} | {why} | {detail}"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="*", help="lesson numbers (04 09); default: all")
    parser.add_argument("--grade-ids", nargs="*", help="only these exercises (ex5_g_step)")
    parser.add_argument("--salts", type=int, default=8, help="salts per answer")
    parser.add_argument("--seed", type=int, default=0, help="draws the salts")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    draw = random.Random(args.seed)
    salts = [1 + draw.randrange(2**30) for _ in range(args.salts)]
    chosen = [
        a for a in answers(args.lessons) if not args.grade_ids or a.grade_id in args.grade_ids
    ]
    threads = [(1, 2), (2, 1)]
    print(f"{len(chosen)} answers x {len(salts)} salts {salts}, + threads {threads}", flush=True)
    start, misses = time.monotonic(), 0
    with ProcessPoolExecutor(args.processes, mp_context=get_context("fork")) as pool:
        jobs = [pool.submit(sweep_one, a, salts, threads) for a in chosen]
        for job in jobs:
            for line in job.result():
                misses += 1
                print(line, flush=True)
    print(f"{misses} disagreements, {time.monotonic() - start:.0f} s", flush=True)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
