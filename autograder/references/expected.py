"""Write the references' states for every check a lesson's cells make, as shipped data.

``python -m autograder.references.expected`` (part of ``make build``) runs every test cell
of ``solutions/`` (hidden tests with their public seeds, the grading salt aside) and every
exercise's default check (the self-check's) in collect mode, computes the reference's state
in each of their cases, on the CPU, and writes ``autograder/lessons/expected/lessonNN.wire``:
what the learner's kernel compares with, since it holds no reference.
``--check`` writes nothing and fails when a file is stale.
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import importlib
import json
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

import autograder.lessons
import autograder.references  # noqa: F401 - registers the references it computes with
from autograder import course
from autograder.common import expectations, hidden_tests, protocol, wire
from autograder.common.oracle import Spec, close
from autograder.grader.pipeline.judge import _Placeholders

REPO = Path(__file__).resolve().parents[2]


def test_cells(solutions: Path) -> list[str]:
    """The source of every test cell of every lesson, hidden tests included."""
    found = []
    for source in course.lesson_sources(solutions):
        for cell in json.loads(source.read_text(encoding="utf-8"))["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell["cell_type"] == "code" and meta.get("grade") and not meta.get("solution"):
                found.append("".join(cell["source"]))
    return found


def collected(solutions: Path) -> list[Spec]:
    """Every check the test cells and the self-checks make, once each (by key)."""
    protocol.MODE.collect()
    try:
        for source in test_cells(solutions):
            scope = {"__builtins__": builtins, "torch": torch}
            names = _Placeholders(scope)
            for code, _ in hidden_tests.parts(source):
                exec(compile(code, "<test cell>", "exec"), scope, names)  # noqa: S102
        for lesson in pkgutil.iter_modules(autograder.lessons.__path__):
            module = importlib.import_module(f"autograder.lessons.{lesson.name}")
            for exercise in getattr(module, "EXERCISES", ()):
                exercise.check(None)
        checks = [check for _, check in protocol.MODE.recorded]
    finally:
        protocol.MODE.reset()
    unique = {expectations.key(check): check for check in checks if isinstance(check, Spec)}
    return list(unique.values())


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Sums in one order: some references (Adam on near-zero gradients) differ in the last
    bits with the thread count, and the shipped states must not depend on the machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def states(checks: list[Spec]) -> dict[str, dict]:
    """{lesson: {check key: {case key: the reference's state}}}, computed on one thread
    (none read from the files this writes or checks)."""
    with one_thread(), expectations.afresh():
        return _states(checks)


def _states(checks: list[Spec]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for check in checks:
        spec = expectations.on_cpu(check)
        cases = {expectations.case_key(case): spec.expected(case) for case in spec.cases()}
        for twice in spec.again_cases():
            cases[expectations.case_key(twice, again=True)] = spec.expected(twice, again=True)
        lesson = out.setdefault(expectations.lesson_of(spec), {})
        lesson[expectations.key(spec)] = cases
    return out


def encoded(data: dict) -> bytes:
    """The states in ``wire.py``'s format, which a learner's kernel reads in a moment (a
    lesson's took up to a second through ``torch.load(weights_only=True)``)."""
    return wire.dumps(data)


def same(a: Any, b: Any, scale: float = 0.0) -> bool:
    """Equal plain data; float tensors within the oracle's tolerance for their dtype, plus a
    hundred roundings of ``scale``, the largest value of the case they belong to. A value
    that ends a long sum of large terms (a gradient that nearly cancels, with the loss scaled
    by 10,000) differs by that much between two CPUs whose vector units sum in another
    order, and the checks tolerate it too; a stale state differs by far more."""
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k], scale) for k in a)
    if type(a) in (list, tuple) and type(b) is type(a):
        return len(a) == len(b) and all(same(x, y, scale) for x, y in zip(a, b, strict=True))
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        from autograder.common.oracle import TOLERANCE

        if a.dtype != b.dtype:
            return False
        rtol, atol = TOLERANCE.get(str(a.dtype), (0.0, 0.0))
        if a.dtype.is_floating_point:
            atol += 100 * torch.finfo(a.dtype).eps * scale
        return close(a, b, (rtol, atol))
    return close(a, b)


def _largest(state: Any) -> float:
    """The largest magnitude of any finite float in a state."""
    if type(state) is dict:
        state = list(state.values())
    if type(state) in (list, tuple):
        return max((_largest(item) for item in state), default=0.0)
    if isinstance(state, torch.Tensor) and state.dtype.is_floating_point and state.numel():
        finite = state[torch.isfinite(state)]
        return float(finite.abs().max()) if finite.numel() else 0.0
    return 0.0


def _same_lesson(now: dict, shipped: dict) -> bool:
    """A lesson's states ({check: {case: state}}) as ``same`` compares them, case by case."""
    return now.keys() == shipped.keys() and all(
        now[check].keys() == shipped[check].keys()
        and all(
            same(state, shipped[check][case], _largest(state)) for case, state in now[check].items()
        )
        for check in now
    )


def stale(solutions: Path = REPO / "solutions") -> list[str]:
    """The lessons whose shipped states differ from what the references compute now, and
    the digest file when it does not name the code installed now (the judge then computes
    every state itself: slower, never wrong)."""
    expectations.forget()
    found = [
        lesson
        for lesson, data in sorted(states(collected(solutions)).items())
        if not _same_lesson(data, expectations.load(lesson))
    ]
    if not expectations.current():
        found.append(expectations.DIGEST.name)
    if expectations.other_torch() is not None or not expectations.TORCH_VERSION.is_file():
        found.append(expectations.TORCH_VERSION.name)
    return found


def write(solutions: Path = REPO / "solutions") -> list[Path]:
    written = []
    expectations.FOLDER.mkdir(parents=True, exist_ok=True)
    for lesson, data in sorted(states(collected(solutions)).items()):
        target = expectations.path(lesson)
        target.write_bytes(encoded(data))
        written.append(target)
    expectations.DIGEST.write_text(expectations.sources_digest() + "\n", encoding="utf-8")
    expectations.TORCH_VERSION.write_text(torch.__version__ + "\n", encoding="utf-8")
    written += [expectations.DIGEST, expectations.TORCH_VERSION]
    expectations.forget()
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solutions", type=Path, default=REPO / "solutions")
    parser.add_argument("--check", action="store_true", help="fail if a shipped file is stale")
    args = parser.parse_args(argv)
    if args.check:
        found = stale(args.solutions)
        if found:
            sys.exit(f"stale expected states: {', '.join(found)} (run `make build`)")
        print("expected states are up to date")
        return
    for path in write(args.solutions):
        print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
