"""Mutation score of each exercise's check: how many plausible wrong answers it refuses.

A check is measured by the answers it has never seen. For every graded exercise this
script takes the official solution cell, makes mutants of it (``mutation/operators.py``:
one or more operators per misconception family of the curriculum, plus generic slips
and the state holes of issue 33) and semantics-preserving transforms
(``mutation/transforms.py``), and judges each in self-study mode as the learner's
kernel does, with the references in-process like the tests — each in a forked child
bounded in time and memory (``mutation/judge.py``). A mutant is *killed* when the test
cell fails or raises, *survives* when it passes, and is *equivalent* when it passes and
``scripts/mutation_equivalents.json`` lists it with the probe showing it behaves like
the solution. Every transform must pass.

    nice -n 10 .venv/bin/python scripts/mutation_score.py --lesson 01 04 --json out.json
    .venv/bin/python scripts/mutation_score.py --exercise ex1_product_grads --sample 4
    .venv/bin/python scripts/mutation_score.py --operators

Prints a Markdown table per exercise and the surviving mutants; exits 1 when an exercise
kills fewer than ``--bar`` % of its non-equivalent mutants, or a transform (or the
solution itself) fails.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the mutation package beside us

from mutation import judge as judging  # noqa: E402
from mutation.operators import OPERATORS, mutants  # noqa: E402
from mutation.sites import Cell, Variant, top_function  # noqa: E402
from mutation.transforms import TRANSFORMS, direct_returns, return_kind, transforms  # noqa: E402

REPO = judging.REPO
SOLUTIONS = REPO / "solutions"
EQUIVALENTS = Path(__file__).resolve().parent / "mutation_equivalents.json"
KILLED, SURVIVED, EQUIVALENT = "killed", "survived", "equivalent"


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: its solution cell, its test cell, and what operators need."""

    lesson: str  # "01"
    grade_id: str  # "ex1_product_grads"
    solution: str
    tests: str
    cell: Cell


@dataclass
class Row:
    """One exercise's line of the table."""

    lesson: str
    exercise: str
    mutants: int = 0
    killed: int = 0
    equivalent: int = 0
    survived: int = 0
    transforms_passed: int = 0
    transforms_total: int = 0
    seconds: float = 0.0
    solution_passes: bool = True
    records: list[dict] = field(default_factory=list)

    @property
    def kill_percent(self) -> float:
        judged = self.mutants - self.equivalent
        return 100.0 if judged == 0 else 100.0 * self.killed / judged

    def meets(self, bar: float) -> bool:
        transforms_ok = self.transforms_passed == self.transforms_total
        return self.solution_passes and transforms_ok and self.kill_percent >= bar


# Loading ------------------------------------------------------------------------------------


def load_exercises(lessons: list[str] | None, grade_ids: list[str] | None) -> list[Exercise]:
    """The chosen exercises, in course order, read from the lessons' source notebooks."""
    from lesson_cells import graded_cells

    from autograder import course

    found = []
    for source in course.lesson_sources(SOLUTIONS):
        number = source.parent.name.split("_", 1)[0]
        if lessons and number not in lessons:
            continue
        cells = graded_cells(source)
        checks = importlib.import_module(f"autograder.lessons.lesson{number}")
        for exercise in checks.EXERCISES:
            grade_id = f"ex{exercise.number}_{exercise.function}"
            if grade_ids and grade_id not in grade_ids:
                continue
            cell = Cell(exercise.function, _returns_accepted(number, grade_id, exercise.function))
            tests = cells[f"{grade_id}_tests"].source
            found.append(Exercise(number, grade_id, cells[grade_id].source, tests, cell))
    return found


def _returns_accepted(lesson: str, grade_id: str, function: str) -> frozenset[str]:
    """The sequence kinds ("tuple", "list") that the catalogue's right answers return."""
    catalogue = importlib.import_module(f"catalog.lesson{lesson}")
    kinds = set()
    for right in catalogue.RIGHT.get(grade_id, []):
        defined = top_function(ast.parse(right.code), function)
        for node in direct_returns(defined) if defined else []:
            kinds.add(return_kind(defined, node.value))
    return frozenset(kinds - {None})


def load_equivalents(path: Path) -> dict[tuple[str, str], dict[str, dict]]:
    """(lesson, exercise) -> mutant key -> the entry that says why it is equivalent.

    An entry with ``devices`` holds only where the course device is of one of those
    types (an ignored ``device`` argument changes nothing on a machine with only a CPU).
    """
    from autograder.kernel.device import course_device

    if not path.is_file():
        return {}
    here = course_device().type
    table: dict[tuple[str, str], dict[str, dict]] = {}
    for entry in json.loads(path.read_text(encoding="utf-8"))["equivalents"]:
        if here in entry.get("devices", [here]):
            table.setdefault((entry["lesson"], entry["exercise"]), {})[entry["mutant"]] = entry
    return table


# Scoring ------------------------------------------------------------------------------------


def sample(found: list[Variant], count: int | None, seed: int, exercise: Exercise) -> list[Variant]:
    """``count`` mutants drawn for this exercise by ``seed``, in their original order."""
    if count is None or count >= len(found):
        return found
    rng = random.Random(f"{seed}:{exercise.lesson}:{exercise.grade_id}")
    return [found[i] for i in sorted(rng.sample(range(len(found)), count))]


def score(exercise: Exercise, options: argparse.Namespace, equivalents: dict) -> Row:
    """Judge the solution, its (sampled) mutants and its transforms; one row of the table."""
    start = time.monotonic()
    row = Row(exercise.lesson, exercise.grade_id)
    tree = ast.parse(exercise.solution)
    baseline = _judge(exercise.solution, exercise, options)
    row.solution_passes = baseline.passed
    if not baseline.passed:
        _progress(f"{exercise.lesson} {exercise.grade_id}: the solution fails: {baseline.detail}")
        return row
    known = equivalents.get((exercise.lesson, exercise.grade_id), {})
    earlier = options.earlier_kills.get((exercise.lesson, exercise.grade_id), set())
    for mutant in sample(mutants(tree, exercise.cell), options.sample, options.seed, exercise):
        if mutant.key in earlier:
            row.records.append(_killed_earlier(mutant))
            continue
        record = _mutant_record(mutant, _judge(mutant.code, exercise, options), known)
        if record["status"] != KILLED and options.salts:
            record["salted"] = _salted(mutant.code, exercise, options)
        row.records.append(record)
    for variant in transforms(tree, exercise.cell):
        row.records.append(_transform_record(variant, _judge(variant.code, exercise, options)))
    _count(row)
    row.seconds = time.monotonic() - start
    if options.verbose:
        for record in row.records:
            _progress(f"  {record['status']:10} {record['key']}  {record['detail'][:120]}")
    _progress(
        f"{exercise.lesson} {exercise.grade_id}: {row.mutants} mutants, "
        f"{row.survived} survived, {row.seconds:.1f} s"
    )
    return row


def _judge(
    code: str, exercise: Exercise, options: argparse.Namespace, salt: int = 0
) -> judging.Verdict:
    return judging.judge(code, exercise.tests, options.timeout, options.memory_mb, salt)


def _killed_earlier(mutant: Variant) -> dict:
    verdict = judging.Verdict(judging.FAILED, "killed in the earlier run (--killed-in)", 0.0)
    return _mutant_record(mutant, verdict, {})


def load_kills(path: Path | None) -> dict[tuple[str, str], set[str]]:
    """(lesson, exercise) -> keys of the mutants an earlier run's JSON records as killed
    (by a failed check, not by running out of time on a busy machine)."""
    if path is None:
        return {}
    document = json.loads(path.read_text(encoding="utf-8"))
    return {
        (row["lesson"], row["exercise"]): {
            r["key"]
            for r in row["records"]
            if r["kind"] == "mutant" and r["status"] == KILLED and r["outcome"] != judging.TIMEOUT
        }
        for row in document["exercises"]
    }


def _salted(code: str, exercise: Exercise, options: argparse.Namespace) -> dict:
    """The probe behind an equivalence: the first salt whose hidden inputs kill the mutant."""
    for salt in range(1, options.salts + 1):
        verdict = _judge(code, exercise, options, salt)
        if not verdict.passed:
            return {"salts": salt, "killed_at": salt, "detail": verdict.detail}
    return {"salts": options.salts, "killed_at": None, "detail": ""}


def _mutant_record(mutant: Variant, verdict: judging.Verdict, known: dict[str, dict]) -> dict:
    if not verdict.passed:
        status = KILLED
    else:
        status = EQUIVALENT if mutant.key in known else SURVIVED
    return {
        "kind": "mutant",
        "key": mutant.key,
        "operator": mutant.operator,
        "line": mutant.line,
        "status": status,
        "outcome": verdict.outcome,
        "detail": verdict.detail,
        "seconds": round(verdict.seconds, 3),
        "listed_equivalent": mutant.key in known,
    }


def _transform_record(variant: Variant, verdict: judging.Verdict) -> dict:
    return {
        "kind": "transform",
        "key": variant.key,
        "operator": variant.operator,
        "status": "passed" if verdict.passed else "failed",
        "outcome": verdict.outcome,
        "detail": verdict.detail,
        "seconds": round(verdict.seconds, 3),
    }


def _count(row: Row) -> None:
    judged = [r for r in row.records if r["kind"] == "mutant"]
    row.mutants = len(judged)
    row.killed = sum(r["status"] == KILLED for r in judged)
    row.equivalent = sum(r["status"] == EQUIVALENT for r in judged)
    row.survived = sum(r["status"] == SURVIVED for r in judged)
    shown = [r for r in row.records if r["kind"] == "transform"]
    row.transforms_total = len(shown)
    row.transforms_passed = sum(r["status"] == "passed" for r in shown)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# Reporting ----------------------------------------------------------------------------------


def table(rows: list[Row]) -> str:
    """The per-exercise table, in Markdown, with a total line."""
    lines = [
        "| lesson | exercise | mutants | killed | equivalent | survived | kill % "
        "| transforms passed | seconds |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        lines.append(_table_line(row.lesson, row.exercise, row))
    total = Row("", "**total**")
    for field_name in ("mutants", "killed", "equivalent", "survived", "seconds"):
        setattr(total, field_name, sum(getattr(r, field_name) for r in rows))
    total.transforms_passed = sum(r.transforms_passed for r in rows)
    total.transforms_total = sum(r.transforms_total for r in rows)
    lines.append(_table_line("", "**total**", total))
    return "\n".join(lines)


def _table_line(lesson: str, exercise: str, row: Row) -> str:
    percent = f"{row.kill_percent:.1f}" if row.solution_passes else "solution fails"
    return (
        f"| {lesson} | {exercise} | {row.mutants} | {row.killed} | {row.equivalent} "
        f"| {row.survived} | {percent} | {row.transforms_passed}/{row.transforms_total} "
        f"| {row.seconds:.1f} |"
    )


def survivors(rows: list[Row]) -> str:
    """The surviving mutants and the failing transforms, one line each."""
    lines = []
    for row in rows:
        for record in row.records:
            if record["status"] in (SURVIVED, "failed"):
                what = "transform fails" if record["kind"] == "transform" else f"L{record['line']}"
                lines.append(
                    f"- {row.lesson} {row.exercise} ({what}): `{record['key']}`{_probe(record)}"
                )
    return "\n".join(lines) if lines else "(none)"


def _probe(record: dict) -> str:
    salted = record.get("salted")
    if not salted:
        return ""
    if salted["killed_at"] is None:
        return f" — passes with the hidden tests salted 1..{salted['salts']}"
    return f" — killed with salt {salted['killed_at']}: {salted['detail'][:160]}"


def stale_equivalents(rows: list[Row], equivalents: dict, sampled: bool) -> list[str]:
    """Listed equivalents that were killed, or (in a full run) that no operator made."""
    stale = []
    for row in rows:
        listed = equivalents.get((row.lesson, row.exercise), {})
        seen = {r["key"]: r for r in row.records if r["kind"] == "mutant"}
        for key in listed:
            if key in seen and seen[key]["status"] == KILLED:
                stale.append(f"{row.lesson} {row.exercise}: listed as equivalent but killed: {key}")
            elif key not in seen and not sampled and row.solution_passes:
                stale.append(f"{row.lesson} {row.exercise}: listed but not made: {key}")
    return stale


def describe_operators() -> str:
    """What each operator and transform does, and which misconception IDs no operator targets."""
    from autograder.common.misconceptions import CATALOGUE

    lines = ["Mutation operators:"]
    lines += [f"  {op.name:24} {', '.join(op.targets):28} {op.why}" for op in OPERATORS]
    lines += ["Transforms (must pass):"]
    lines += [f"  {t.name:24} {t.why}" for t in TRANSFORMS]
    targeted = {target for op in OPERATORS for target in op.targets}
    untargeted = sorted(set(CATALOGUE) - targeted)
    lines.append(f"Misconception IDs no operator targets: {', '.join(untargeted) or 'none'}")
    return "\n".join(lines)


def write_json(path: Path, rows: list[Row], stale: list[str], options: argparse.Namespace) -> None:
    exercises = []
    for row in rows:
        data = asdict(row)
        data["kill_percent"] = round(row.kill_percent, 2)
        exercises.append(data)
    settings = {"sample": options.sample, "seed": options.seed, "bar": options.bar}
    document = {"settings": settings, "exercises": exercises, "stale_equivalents": stale}
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# Command line ---------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lesson", nargs="+", metavar="NN", help="lessons, e.g. 01 04")
    parser.add_argument("--exercise", nargs="+", metavar="exN_name", help="grade ids")
    parser.add_argument("--sample", type=int, metavar="K", help="K mutants per exercise")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write every verdict here")
    parser.add_argument("--bar", type=float, default=98.0, help="least kill %% per exercise")
    parser.add_argument(
        "--salts",
        type=int,
        default=0,
        metavar="K",
        help="judge each mutant that passes again with the hidden tests salted 1..K",
    )
    parser.add_argument(
        "--killed-in",
        type=Path,
        nargs="+",
        metavar="JSON",
        help="an earlier run's --json: its killed mutants count as killed without judging "
        "(valid while the checks only grew stricter; the solution and rewrites are judged)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per answer")
    parser.add_argument("--memory-mb", type=int, default=2048, help="MiB per answer")
    parser.add_argument("--equivalents", type=Path, default=EQUIVALENTS)
    parser.add_argument("--operators", action="store_true", help="list operators and exit")
    parser.add_argument("--verbose", action="store_true", help="print every verdict")
    options = parser.parse_args(argv)
    if options.lesson:
        options.lesson = [lesson.zfill(2) for lesson in options.lesson]
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    judging.prepare()
    if options.operators:
        print(describe_operators())
        return 0
    exercises = load_exercises(options.lesson, options.exercise)
    if not exercises:
        _progress("no exercise matches --lesson/--exercise")
        return 2
    equivalents = load_equivalents(options.equivalents)
    options.earlier_kills = {}
    for path in options.killed_in or []:
        for key, keys in load_kills(path).items():
            options.earlier_kills.setdefault(key, set()).update(keys)
    rows = [score(exercise, options, equivalents) for exercise in exercises]
    stale = stale_equivalents(rows, equivalents, sampled=options.sample is not None)
    print(table(rows))
    print("\nSurviving mutants and failing transforms:\n")
    print(survivors(rows))
    for line in stale:
        _progress(f"stale equivalent: {line}")
    if options.json:
        write_json(options.json, rows, stale, options)
    return 0 if all(row.meets(options.bar) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
