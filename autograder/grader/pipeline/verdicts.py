"""nbgrader's autograde steps that decide the points: observe in a sandbox, judge here.

``ObserveTestCells`` runs before the (sandboxed) Execute step: it reads the
learner's code cells, applies the learner-code policy, and has the worker's
zygote fork the confined observer on the cells that keep to it (which forks a
fresh process per test cell, running the statements above that test cell).
``JudgeTestCells`` runs after Execute and before ``SaveAutoGrades``: it judges
every graded test cell in this process from the observations and replaces the
test cell's outputs with the verdict — so the points nbgrader saves come from
here, never from the learner's kernel. Where the first run (the learner's
kernel) and the verdict disagree, that is reported as a flag.
"""

from __future__ import annotations

import json
import select
import time
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Any, Dict, Integer, List, Unicode

from autograder.common.i18n import Text
from autograder.grader import reasons
from autograder.grader.pipeline import integrity, policy, stages
from autograder.grader.pipeline.integrity import is_test_cell, normal_source, visible_source
from autograder.grader.pipeline.judge import Verdict, judge_cell, visible_checks_pass

MAX_OUTPUT = 256 * 1024**2


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def instructor_sources(source_nb) -> set[str]:
    """Code the instructor wrote outside solution regions (test cells as learners see them).

    A learner's cell with exactly this code is the instructor's, so the policy exempts it.
    """
    return {
        visible_source(c.source)
        for c in source_nb.cells
        if c.cell_type == "code" and not _meta(c).get("solution")
    }


def first_run_passed(cell) -> bool:
    """What the learner's kernel said about a test cell: no error output means it passed."""
    return not any(o.get("output_type") == "error" for o in cell.get("outputs", []))


def verdict_outputs(verdict: Verdict) -> list[NotebookNode]:
    """The test cell's outputs as the grader decided them; nbgrader scores these."""
    if verdict.passed:
        return [NotebookNode(output_type="stream", name="stdout", text=verdict.feedback + "\n")]
    lines = verdict.feedback.splitlines()
    return [
        NotebookNode(
            output_type="error", ename="CheckFailed", evalue=verdict.feedback, traceback=lines
        )
    ]


class ObserveTestCells(NbGraderPreprocessor):
    """Read the learner's code and start the sandboxed observer, before the kernel runs.

    The observer works while the kernel's first run goes on; ``JudgeTestCells``
    collects what it saw.
    """

    source_dirs = List(
        Unicode(),
        help="Folders with the instructor's notebooks of this assignment (the course's source, "
        "and the bilingual source, so that a notebook in either language is recognised).",
    ).tag(config=True)
    cell_timeout = Integer(60, help="Seconds one test cell's observation may take.").tag(
        config=True
    )
    threads = Integer(0, help="CPU threads the observer's torch may use (0: default).").tag(
        config=True
    )
    notebook_timeout = Integer(
        0, help="Seconds the whole notebook may take (0: no budget); reading it counts too."
    ).tag(config=True)
    zygote = Any(help="The worker's autograder.grader.sandbox.forked.Zygote.").tag(config=True)
    cgroup = Any(None, allow_none=True, help="The submission's Cgroup (None: --unsafe).").tag(
        config=True
    )
    salt = Integer(0, help="The submission's salt for the hidden tests (hidden_inputs).").tag(
        config=True
    )
    env = Dict(help="The observer's whole environment.").tag(config=True)
    cwd = Unicode(help="The observer's working folder (its scratch).").tag(config=True)

    def preprocess(self, nb, resources):
        import nbformat

        started = time.monotonic()
        name = resources.get("unique_key", "notebook")
        exempt = set()
        for folder in self.source_dirs:
            source = Path(folder) / f"{name}.ipynb"
            if source.is_file():
                exempt |= instructor_sources(nbformat.read(str(source), as_version=4))
        flags, statements, tests = read_notebook(nb, exempt)
        resources["reading_s"] = time.monotonic() - started  # the kernel's budget counts it
        stages.add("reading", resources["reading_s"])
        budget = self.cell_timeout * len(tests) + 60
        if self.notebook_timeout > 0:  # the observer runs the same learner code: same budget
            budget = min(budget, max(self.notebook_timeout - resources["reading_s"], 1))
        job = {
            "statements": statements,
            "tests": [
                {"grade_id": _meta(c)["grade_id"], "source": c.source, "upto": upto}
                for c, upto in tests
            ],
            "timeout_s": self.cell_timeout,
            "budget_s": budget,  # no test cell starts, and no retry, after this
            "threads": self.threads,
            "salt": self.salt,
            "log": f"{name}.observer.log",  # in the observer's working folder (its scratch)
        }
        child = None
        if tests:
            payload = json.dumps(job).encode()
            child = self.zygote.fork(
                "observer", self.cgroup, self.env, cwd=self.cwd, payload=payload
            )
            RUNNING.add(child)
        resources["observation"] = Observation(child, flags, time.monotonic() + budget + 60)
        return nb, resources


class Observation:
    """A running observer (a ``forked.Forked``) and what reading the notebook found."""

    def __init__(self, child, flags: list[dict], deadline: float):
        self.child, self.flags, self.deadline = child, flags, deadline

    def collect(self) -> dict:
        """The observer's record of every test cell; {} when it failed or ran out of time."""
        from autograder.common.protocol import cell_record, from_bytes

        if self.child is None:
            return {}
        try:
            out = _read_until_closed(self.child.channel, self.deadline)
        finally:
            self.child.kill()
            self.child.channel.close()
            RUNNING.discard(self.child)
        if out is None:
            return {}
        try:
            cells = from_bytes(out)
        except Exception:  # anything but plain data is refused: no points
            return {}
        if not isinstance(cells, dict):
            return {}
        return {grade_id: cell_record(record) for grade_id, record in cells.items()}


def _read_until_closed(channel, deadline: float) -> bytes | None:
    """Everything the observer writes, or None past the deadline or the size limit."""
    chunks, size = [], 0
    while True:
        if not select.select([channel], [], [], max(deadline - time.monotonic(), 0))[0]:
            return None
        chunk = channel.recv(1 << 20)
        if not chunk:
            return b"".join(chunks) or None
        size += len(chunk)
        if size > MAX_OUTPUT:
            return None
        chunks.append(chunk)


RUNNING: set = set()


def stop_observers() -> None:
    """Kill observers whose notebook never reached the judge step (nbgrader failed)."""
    for child in list(RUNNING):
        child.kill()
        child.channel.close()
        RUNNING.discard(child)


MAX_CELLS = 2000  # the course's notebooks have fewer than 100
MAX_CODE_CHARS = 4 * 1024**2  # all code cells together


def too_large(nb) -> Text | None:
    """Why a notebook is too large to read for grading (status ``rejected``), or None."""
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return None  # not a notebook: nbformat's validation says so
    if len(cells) > MAX_CELLS:
        return reasons.says(
            "it has {n} cells, more than the {most} a graded notebook may have",
            "它有 {n} 个单元格，超过了评分笔记本最多允许的 {most} 个",
            n=len(cells),
            most=MAX_CELLS,
        )
    code = 0
    for cell in cells:
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        code += sum(map(len, source)) if isinstance(source, list) else len(str(source))
    if code > MAX_CODE_CHARS:
        return reasons.says(
            "its cells hold more than {mib} MiB of code",
            "它的单元格里的代码超过 {mib} MiB",
            mib=MAX_CODE_CHARS // 1024**2,
        )
    return None


def _exercise_test(grade_id: str | None, test_ids: set[str]) -> list[str]:
    """The test cell of a solution cell's own exercise (``ex1_x`` → ``ex1_x_tests``)."""
    own = f"{grade_id}_tests"
    return [own] if grade_id and own in test_ids else []


def read_notebook(nb, exempt: set[str]):
    """Policy flags, the statements the observer runs, and each test cell with how many of
    those statements come before it. Linear in the cells; each cell is parsed once.

    A learner cell that breaks the policy is left out of the observer and voids only its
    own exercise's test cell; the instructor's cells contribute their definitions and the
    assignments learner or test code reads (``DEVICE``).
    """
    problem = too_large(nb)
    if problem:
        raise ValueError(problem.en)
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    tests = [c for _, c in code if is_test_cell(c)]
    test_ids = {_meta(c)["grade_id"] for c in tests}
    cells = []  # (index, cell, tree, instructor's)
    for index, cell in code:
        if not is_test_cell(cell):
            tree = policy.parse(cell.source)
            if tree is not None:
                cells.append((index, cell, tree, normal_source(cell.source) in exempt))
    context = policy.context_of(
        [t for _, _, t, mine in cells if not mine], [t for _, _, t, mine in cells if mine]
    )
    flags, refused = [], set()
    for index, cell, tree, instructors in cells:
        if instructors:
            continue
        grade_id = _meta(cell).get("grade_id")
        for violation in policy.violations(tree, context):
            refused.add(index)
            cell_name = grade_id or f"cell {index}"
            voids = tuple(_exercise_test(grade_id, test_ids))
            flag = integrity.Flag(integrity.FORBIDDEN, cell_name, violation.describe(), voids)
            flags.append(flag.as_dict())
    reads = set()
    for index, _, tree, instructors in cells:
        if not instructors and index not in refused:
            reads |= policy.global_reads(tree)
    for cell in tests:
        tree = policy.parse(cell.source)
        reads |= policy.global_reads(tree) if tree else set()
    needed = policy.needed_names(reads, [t for _, _, t, mine in cells if mine])
    statements = []
    kept = {index: (tree, instructors) for index, _, tree, instructors in cells}
    placed = []
    for index, cell in code:
        if is_test_cell(cell):
            placed.append((cell, len(statements)))
        elif index in kept and index not in refused:
            tree, instructors = kept[index]
            if instructors:
                statements.extend(policy.instructor_statements(tree, needed))
            else:
                statements.extend(policy.statements(tree))
    return flags, statements, placed


class JudgeTestCells(NbGraderPreprocessor):
    """Give each graded test cell the points the grader-side judge decides."""

    language = Unicode("en", help="Language of the verdicts' feedback (the course's).").tag(
        config=True
    )
    report_dir = Unicode(help="Folder that receives <notebook>.json: flags, verdicts.").tag(
        config=True
    )
    salt = Integer(0, help="The salt the observer ran the hidden tests with.").tag(config=True)
    voided = Dict(
        help="Per notebook, test cells that earn nothing whatever the verdict, with the reason "
        '(e.g. found deleted or edited when the submission was read) as {"en": …, "zh": …}.'
    ).tag(config=True)

    def preprocess(self, nb, resources):
        name = resources.get("unique_key", "notebook")
        observation = resources.pop("observation")
        with stages.timed("observer wait"):
            observed = observation.collect()
        flags = observation.flags
        read_before = self.voided.get(name, {})
        verdicts = {}
        for cell in filter(is_test_cell, nb.cells):
            grade_id = _meta(cell)["grade_id"]
            seen = observed.get(grade_id, {})
            with stages.timed("judge"):
                verdict = judge_cell(cell.source, seen, self.language, salt=self.salt)
                disagrees = first_run_passed(cell) != verdict.passed
                if disagrees and first_run_passed(cell):  # the first run had no hidden tests
                    disagrees = not visible_checks_pass(cell.source, seen, self.language)
            voided = voiding(grade_id, flags, read_before)
            if voided and verdict.passed:
                verdict = Verdict(False, voided_feedback(voided)(self.language))
            if disagrees and not voided:  # a voided cell's verdict is the voiding
                flags.append(_disagreement(grade_id, first_run_passed(cell)))
            cell.outputs = verdict_outputs(verdict)
            verdicts[grade_id] = {
                "passed": verdict.passed,
                "misconceptions": list(verdict.misconceptions),
                "not_attempted": verdict.not_attempted,
            }
        if self.report_dir:
            target = Path(self.report_dir) / f"{name}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps({"flags": flags, "verdicts": verdicts}), encoding="utf-8")
        return nb, resources


_VOIDED = Text(
    "No credit for this test: {reason}. Graded notebooks keep their test cells intact and "
    "use only what graded code may use (README: “What graded code may use”).",
    "这个测试不计分：{reason}。评分笔记本必须保留完整的测试单元格，"
    "且只能使用评分代码允许的写法（见 README“评分代码可以使用的写法”）。",
)
_DISAGREES = {
    True: Text(
        "the test passed in the learner's kernel but not in the grader's judgement",
        "这个测试在学生的内核里通过了，评分程序却判定为未通过",
    ),
    False: Text(
        "the test failed in the learner's kernel but passed in the grader's judgement",
        "这个测试在学生的内核里未通过，评分程序却判定为通过",
    ),
}


def voiding(grade_id: str, flags: list[dict], read_before: dict[str, dict]) -> Text | None:
    """Why a test cell earns nothing whatever its verdict, or None: the policy flags of its
    exercise (``flags``, from read_notebook) and what reading the submission found
    (``read_before``: grade id -> {"en": …, "zh": …})."""
    found = [_voiding(f) for f in flags if grade_id in f["voids"]]
    found += [Text(**read_before[grade_id])] if grade_id in read_before else []
    return reasons.join(found)


def voided_feedback(reason: Text) -> Text:
    """A voided test cell's feedback, in both languages."""
    return _VOIDED.format(reason=reason)


def _voiding(flag: dict) -> Text:
    """What a policy flag of this notebook says in a test's feedback: its cell and detail."""
    detail = reasons.saved(flag, "detail")
    cell = reasons.cell_name(flag["cell"])
    return reasons.says("{cell} {detail}", "{cell} {detail}", cell=cell, detail=detail)


def _disagreement(grade_id: str, first_run: bool) -> dict:
    return integrity.Flag(integrity.DISAGREES, grade_id, _DISAGREES[first_run], ()).as_dict()
