"""How a set of answers the checks were never shown fares: the measure of a held-back set.

Mutation testing (``mutation_score.py``) measures a check with answers a program writes;
this script measures it with answers people wrote, kept away from whoever wrote the checks.
Each answer is judged three ways, each in a forked child bounded in time and memory
(``mutation/judge.py``):

- **self-study**: the test cell as the learner's kernel runs it, visible checks only;
- **instructor**: the whole test cell, hidden checks included, unsalted;
- **graded**: as ``course-grade`` decides the points: observed, recorded, judged from the
  record, the hidden checks salted as for one learner; and the learner-code policy read
  from the cell (a refused line costs the exercise its points).

A wrong answer should lose its points when graded and fail the instructor's view; a right
one must pass every view. The file format (one JSON list per file, or a folder of them):

    {"lesson": "01", "grade_id": "ex4_per_batch_grads", "right": false,
     "kind": "state kept across calls", "name": "...", "code": "def ...", "probe": "..."}

    nice -n 10 .venv/bin/python scripts/answer_set_score.py answers/ --json verdicts.json

Prints the rates per lesson and every answer whose verdict is not the one it should get;
exits 1 when a right answer loses points or fewer than ``--bar`` % of the wrong ones do.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the mutation package beside us

from mutation import judge as judging  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LEARNER_SALT = 48_611  # one learner's salt: the hidden checks draw other inputs than self-study


@dataclass(frozen=True)
class Answer:
    """One answer of the set, and whether it is right (by its author's probe)."""

    lesson: str
    grade_id: str
    right: bool
    kind: str
    name: str
    code: str
    probe: str = ""


@dataclass
class Outcome:
    """The three views' verdicts and the policy's, for one answer."""

    answer: Answer
    self_study: bool
    instructor: bool
    graded: bool  # points earned: the split verdict passed and the policy refused nothing
    refused: list[str]
    detail: str

    @property
    def as_it_should(self) -> bool:
        if self.answer.right:
            return self.self_study and self.instructor and self.graded
        return not self.graded and not self.instructor


def load(paths: list[Path]) -> list[Answer]:
    """Every answer in the files (or the folders' ``*.json`` files), in the order given."""
    files = [f for p in paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    return [Answer(**entry) for f in files for entry in json.loads(f.read_text("utf-8"))]


@functools.cache
def _notebook_imports(lesson: str) -> str:
    """What runs before an answer cell in its notebook: the imports the lesson's code
    cells make (``torch``, ``F``, ``copy``...), which an answer may use without repeating
    them; the course's own setup and plotting imports left out. Read once per lesson."""
    notebook = next((ROOT / "notebooks" / "en").glob(f"{lesson}_*.ipynb"))
    cells = json.loads(notebook.read_text("utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    imports = [
        line
        for line in code.splitlines()
        if line.startswith(("import ", "from "))
        and not any(name in line for name in ("autograder", "IPython", "matplotlib"))
    ]
    return "\n".join(dict.fromkeys(imports))


def _visible(tests: str) -> str:
    from autograder.grader.pipeline.judge import visible_part

    return visible_part(tests)


def _refused(code: str, setup: str) -> list[str]:
    """What the policy refuses in the answer cell, read with the names the notebook's
    setup cell binds (the instructor's cell, which the policy does not judge)."""
    from autograder.grader.pipeline import policy

    tree = policy.parse(code)
    if tree is None:
        return ["the cell cannot be read"]
    context = policy.imported_names([policy.parse(setup), tree])
    return [v.describe()("en") for v in policy.violations(tree, context)]


def judge(answer: Answer, tests: str, options: argparse.Namespace) -> Outcome:
    bounds = {"timeout": options.timeout, "memory_mb": options.memory_mb}
    setup = _notebook_imports(answer.lesson)
    code = f"{setup}\n\n{answer.code}"
    learner = judging.judge(code, _visible(tests), **bounds)
    instructor = judging.judge(code, tests, **bounds)
    split = judging.judge(code, tests, salt=LEARNER_SALT, split=True, **bounds)
    refused = _refused(answer.code, setup)
    detail = next((v.detail for v in (split, instructor, learner) if not v.passed), "")
    return Outcome(
        answer,
        learner.passed,
        instructor.passed,
        split.passed and not refused,
        refused,
        detail or "; ".join(refused),
    )


def table(outcomes: list[Outcome]) -> str:
    """Per lesson: wrong answers that lose their points, right ones that keep them."""
    lines = [
        "| lesson | wrong | lose points when graded | fail the instructor's view "
        "| fail self-study (visible only) | right | keep points in every view |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    lessons = sorted({o.answer.lesson for o in outcomes})
    for lesson in [*lessons, "total"]:
        mine = [o for o in outcomes if lesson in ("total", o.answer.lesson)]
        wrong = [o for o in mine if not o.answer.right]
        right = [o for o in mine if o.answer.right]
        lost = sum(not o.graded for o in wrong)
        lines.append(
            f"| {lesson} | {len(wrong)} | {lost} ({_percent(lost, len(wrong))}) "
            f"| {sum(not o.instructor for o in wrong)} "
            f"| {sum(not o.self_study for o in wrong)} | {len(right)} "
            f"| {sum(o.as_it_should for o in right)} |"
        )
    return "\n".join(lines)


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "-"


def misses(outcomes: list[Outcome]) -> str:
    """Every answer whose verdict is not the one it should get, with what was seen."""
    shown = []
    for o in outcomes:
        if o.as_it_should:
            continue
        a = o.answer
        verdicts = f"self-study {o.self_study}, instructor {o.instructor}, graded {o.graded}"
        side = "RIGHT answer refused" if a.right else "WRONG answer accepted"
        shown.append(f"- {side}: {a.lesson} {a.grade_id} [{a.kind}] {a.name} ({verdicts})")
        shown.append(f"    {(o.detail if a.right else a.probe)[:300]}")
    return "\n".join(shown) or "(none)"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("answers", nargs="+", type=Path, help="JSON files or folders of them")
    parser.add_argument("--json", type=Path, help="write every verdict here")
    parser.add_argument("--bar", type=float, default=97.0, help="least %% of wrong answers lost")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per view")
    parser.add_argument("--memory-mb", type=int, default=2048, help="MiB per view")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    judging.prepare()
    from mutation_score import load_exercises

    tests = {(e.lesson, e.grade_id): e.tests for e in load_exercises(None, None)}
    outcomes = []
    for answer in load(options.answers):
        outcome = judge(answer, tests[answer.lesson, answer.grade_id], options)
        mark = "ok" if outcome.as_it_should else "MISS"
        print(f"{mark:4} {answer.lesson} {answer.grade_id}: {answer.name}", file=sys.stderr)
        outcomes.append(outcome)
    print(table(outcomes))
    print("\nAnswers not judged as they should be:\n")
    print(misses(outcomes))
    if options.json:
        records = [{**asdict(o.answer), **_verdicts(o)} for o in outcomes]
        options.json.write_text(json.dumps(records, indent=1, ensure_ascii=False), "utf-8")
    wrong = [o for o in outcomes if not o.answer.right]
    lost = 100.0 * sum(not o.graded for o in wrong) / len(wrong) if wrong else 100.0
    right_ok = all(o.as_it_should for o in outcomes if o.answer.right)
    return 0 if right_ok and lost >= options.bar else 1


def _verdicts(o: Outcome) -> dict:
    return {
        "self_study": o.self_study,
        "instructor": o.instructor,
        "graded": o.graded,
        "refused": o.refused,
        "detail": o.detail,
    }


if __name__ == "__main__":
    sys.exit(main())
