"""Grade one learner's submission of one assignment with nbgrader, sandboxed.

This is the unit of work that local processes (or Dask workers) run. It only
reads the course through nbgrader and writes the gradebook, the autograded
notebooks and its records; learner code runs in the sandboxed kernel.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder import course
from autograder.common.i18n import Text
from autograder.grader import reasons
from autograder.grader.pipeline import (
    hidden_inputs,
    integrity,
    nbgrader_schema,
    records,
    stages,
    submission,
    verdicts,
)
from autograder.grader.pipeline.records import GradeRecord
from autograder.grader.reports import hand_grades
from autograder.grader.sandbox import forked
from autograder.grader.sandbox.bwrap import Confinement
from autograder.grader.sandbox.cgroups import CgroupParent

STAGING = "grading/staged"
OUT_OF_TIME = "out of time"  # execute.OUT_OF_TIME, without importing nbclient here
GRADEBOOK_WAIT_S = 120  # parallel workers write one SQLite gradebook
TIMESTAMP = "timestamp.txt"  # written by `nbgrader submit`, a few dozen bytes
EXCEPTION_LINE = re.compile(r"^(?:[a-z_]\w*\.)*[A-Z]\w*: \S")  # pkg.module.SomeError: what


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to grade one submission; plain data, picklable."""

    course_root: str
    assignment: str
    student: str
    confinement: Confinement
    cgroup_parent: CgroupParent | None  # None only in an --unsafe run without cgroups
    bounds: submission.Bounds = submission.Bounds()
    threads: int = 0  # CPU threads per kernel, so that parallel kernels do not oversubscribe
    # On a Dask worker: each submission's cgroup is made in the worker's own, and the worker
    # refuses without one (the client, e.g. the instructor's formgrader, may have none).
    worker_cgroup: bool = False


def _config(
    task: Task,
    zygote,
    workdir: Path,
    incident_dir: Path,
    confinement: Confinement,
    read_flags: dict[str, list[integrity.Flag]],
):
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.grader.pipeline.execute import SandboxedExecute
    from autograder.grader.pipeline.verdicts import JudgeTestCells, ObserveTestCells
    from autograder.grader.sandbox.bwrap import learner_environment, learner_scratch

    root = Path(task.course_root)
    config = Config(PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config())
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.submitted_directory = STAGING
    config.CourseDirectory.db_url = course.gradebook_url(root, GRADEBOOK_WAIT_S)
    steps = []
    for step in Autograde.class_traits()["autograde_preprocessors"].default():
        steps += [ObserveTestCells, SandboxedExecute, JudgeTestCells] if step is Execute else [step]
    config.Autograde.autograde_preprocessors = steps
    config.SandboxedExecute.timeout = confinement.limits.cell_timeout_s
    config.SandboxedExecute.notebook_timeout = confinement.limits.notebook_timeout_s
    config.ObserveTestCells.notebook_timeout = confinement.limits.notebook_timeout_s
    config.SandboxedExecute.confinement = confinement
    config.SandboxedExecute.zygote = zygote
    config.SandboxedExecute.workdir = str(workdir)
    config.SandboxedExecute.incident_dir = str(incident_dir)
    config.SandboxedExecute.feedback_language = course.language(root)
    config.SandboxedExecute.threads = task.threads
    config.ObserveTestCells.source_dirs = [
        str(root / folder / task.assignment) for folder in ("source", course.BILINGUAL)
    ]
    config.ObserveTestCells.cell_timeout = confinement.limits.cell_timeout_s
    config.ObserveTestCells.threads = task.threads
    config.ObserveTestCells.zygote = zygote
    config.ObserveTestCells.cgroup = confinement.cgroup
    # Without a sandbox (--unsafe) the observer works in the kernel's folder: same learner.
    config.ObserveTestCells.env = learner_environment(confinement, str(workdir), task.threads)
    config.ObserveTestCells.cwd = learner_scratch(confinement, str(workdir))
    salt = hidden_inputs.salt(root, task.student, task.assignment)
    config.ObserveTestCells.salt = config.JudgeTestCells.salt = salt
    config.JudgeTestCells.language = course.language(root)
    config.JudgeTestCells.report_dir = str(incident_dir / "verdicts")
    config.JudgeTestCells.voided = {
        name: integrity.voided_cells(found) for name, found in read_flags.items()
    }
    return config


# What an incident of the kernel's run says in a reason (execute.py's kinds).
INCIDENTS = {
    OUT_OF_TIME: (
        "out of time: the notebook's {budget} s budget ran out before {cell}; "
        "the cells from there on were not run",
        "评分时间用完：运行到 {cell} 之前，笔记本已用完 {budget} 秒的评分时间；"
        "从这里起的单元格都没有运行",
    ),
    "timed out": ("timed out in {cell}", "{cell} 运行超时"),
    "crashed": ("crashed in {cell}", "运行 {cell} 时内核崩溃"),
}
NOT_OBSERVED = ("test cells not observed: {said}", "测试单元格没有被观察到：{said}")
NBGRADER_FAILED = ("nbgrader could not grade it: {said}", "nbgrader 无法评分：{said}")


def _describe(incident: dict, budget_s: int) -> Text:
    en, zh = INCIDENTS.get(incident["kind"], ("{kind} in {cell}", "{cell}：{kind}"))
    cell = reasons.cell_name(incident["cell"])
    return reasons.says(en, zh, budget=budget_s, cell=cell, kind=incident["kind"])


def _status(
    incidents: list[dict], flags: list[integrity.Flag], budget_s: int
) -> tuple[str, Text | None]:
    """Crashes, then timeouts, then integrity flags decide the status; the reason lists all."""
    kinds = [i["kind"] for i in incidents]
    if "crashed" in kinds:
        status = "crashed"
    elif kinds:
        status = "timed out"
    else:
        status = "flagged" if flags else "graded"
    parts = [_describe(i, budget_s) for i in incidents]
    parts += [flag.describe() for flag in flags]
    return status, reasons.join(parts)


def _flags(root: Path, assignment: str, name: str, path: Path) -> list[integrity.Flag]:
    source = nbformat.read(str(root / "source" / assignment / f"{name}.ipynb"), as_version=4)
    submitted = nbformat.read(str(path), as_version=4)
    return integrity.structural_flags(source, submitted)


def _judged(found: list[integrity.Flag], report: dict) -> list[integrity.Flag]:
    """Add the judge step's flags (policy, disagreements) to those found by reading."""
    return found + [integrity.Flag.from_dict(f) for f in report.get("flags", [])]


def _failure(outcome: dict, child_error: str) -> Text:
    """Why nbgrader could not grade: its own last exception (not its "see the above
    traceback"), then what the kernel or observer said before it died, if anything."""
    text = "\n".join(outcome.get(key) or "" for key in ("log", "error"))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    raised = [
        line for line in lines if EXCEPTION_LINE.match(line) and "NbGraderException" not in line
    ]
    said = (raised or lines or ["no log"])[-1] + (f"; {child_error}" if child_error else "")
    return reasons.says(*NBGRADER_FAILED, said=said)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def grade(task: Task) -> list[GradeRecord]:
    """Grade one submission; never raises for a learner's fault, always returns records."""
    started = time.monotonic()
    _quiet_gradebook()
    nbgrader_schema.install()
    stages.reset()
    _judge_threads(task.threads)
    root = Path(task.course_root)
    with stages.timed("staging"):
        names = submission.expected_notebooks(root, task.assignment)
        refused = submission.rejection(root, task.assignment, task.student, task.bounds)
    if refused:
        result = [_record(task, name, "rejected", refused) for name in names]
    else:
        with stages.timed("staging"):
            staged = submission.stage(
                root, root / STAGING, task.assignment, task.student, names, task.bounds.max_bytes
            )
            _stage_timestamp(root / "submitted" / task.student / task.assignment, staged)
        try:
            result = _grade_staged(task, root, staged, names)
        finally:
            with stages.timed("cleanup"):
                shutil.rmtree(staged, ignore_errors=True)
    elapsed = time.monotonic() - started
    for record in result:
        record.sandbox = task.confinement.kind
        record.seconds = round(elapsed, 2)
        record.stages = stages.taken()
        records.save(root, record)
    return result


def _quiet_gradebook() -> None:
    """nbgrader 0.9 builds a new submission's rows in a way SQLAlchemy 2 warns about ("Object
    of type <SubmittedNotebook> not in session, add operation along ... will not proceed"),
    in the instructor's terminal, now and then; the rows are written all the same."""
    warnings.filterwarnings("ignore", r"Object of type <Submitted\w+> not in session")


def preload() -> None:
    """Import what grading needs. The local runner calls it before it forks its workers, so
    that they start with it imported (once per run, not once per worker). What is imported
    then is frozen out of the garbage collector's sight (``gc.freeze``): a full collection
    while judging would otherwise walk all of torch, nbgrader and the course again."""
    _import_dynamo()
    from nbgrader.converters import Autograde  # noqa: F401

    from autograder.grader.pipeline import execute, verdicts  # noqa: F401 - judge, references

    gc.freeze()


def _import_dynamo() -> None:
    """Import torch._dynamo, which an optimizer's first construction imports (~1 s a worker).

    Importing it makes torch.compile's cache folder, by default ``$TMPDIR/torchinductor_USER``
    on the grader's host, and names it in ``$TORCHINDUCTOR_CACHE_DIR``. Grading compiles
    nothing, so unless that variable names a folder already, the folder is a temporary one,
    removed at once, and the variable is left unset as it was. Each worker's start calls
    ``preload`` again; by then it is imported, and no folder is made."""
    if "torch._dynamo" in sys.modules or "TORCHINDUCTOR_CACHE_DIR" in os.environ:
        import torch._dynamo  # noqa: F401

        return
    with tempfile.TemporaryDirectory(prefix="course-grade-inductor-") as folder:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
        try:
            import torch._dynamo  # noqa: F401
        finally:
            del os.environ["TORCHINDUCTOR_CACHE_DIR"]


def warm(task: Task) -> None:
    """A local worker's start (the pool's initializer): use the zygote the run started
    (``forked.start_early``), or start one, before any submission arrives.
    Only a head start: a zygote that fails here is started again by the first submission
    (or the start-up probe), which then says why."""
    try:
        forked.take_early()
        _judge_threads(task.threads)
        preload()
        _zygote(task)
    except Exception:  # noqa: BLE001, S110 - see above: the submission reports it
        pass


def _zygote(task: Task) -> forked.Zygote:
    lessons = forked.shipped_lessons([task.assignment])  # where this worker starts its own
    return forked.zygote_for(
        task.confinement, task.threads, task.cgroup_parent is not None, lessons
    )


def probe(task: Task) -> str | None:
    """The start-up probe (``sandbox/probe.py``), run in this worker with its zygote:
    None when grading can work here, else why not."""
    from autograder.grader.sandbox import probe as start_up

    try:
        zygote = _zygote(task)
    except forked.ZygoteError as error:
        return str(error)
    except Exception as error:  # the zygote could not even be asked: say why
        return f"the start-up probe failed: {type(error).__name__}: {error}"
    return start_up.failure(task.confinement, task.cgroup_parent, zygote)


def _record(task: Task, name: str, status: str, reason: Text | None) -> GradeRecord:
    """A notebook's record, its reason in both languages."""
    return GradeRecord(
        task.student, task.assignment, name, status, **reasons.fields("reason", reason)
    )


def _judge_threads(threads: int) -> None:
    """The judge's torch (the references it runs) keeps to the worker's share of the cores:
    with every core's threads in each worker, parallel workers slowed each other down."""
    import torch

    torch.set_num_threads(max(threads, 1))


def _stage_timestamp(submitted: Path, staged: Path) -> None:
    """Stage the submission's time when it reads as one: nbgrader records it in the gradebook,
    and the formgrader counts a submission as autograded only when the two agree."""
    from nbgrader.utils import parse_utc

    submission.copy_plain_file(submitted / TIMESTAMP, staged / TIMESTAMP, 256)
    try:
        parse_utc((staged / TIMESTAMP).read_text(encoding="utf-8").strip())
    except (OSError, ValueError, OverflowError):
        (staged / TIMESTAMP).unlink(missing_ok=True)


def grade_on_worker(task: Task) -> list[GradeRecord]:
    """``grade`` on a Dask worker: the sandbox's user, host paths and cgroup are the worker's
    own, not the client's (a root client's cluster runs as the unprivileged grading user)."""
    import os
    import sys

    from autograder.grader.sandbox import bwrap, cgroups

    parent = cgroups.find_parent() if task.worker_cgroup else None
    if isinstance(parent, str):
        raise RuntimeError(f"this worker may not make the submission's cgroup: {parent}")
    # A bridged interpreter (course-classroom setup --python) reads its packages elsewhere.
    packages = [p for p in sys.path if Path(p).name == "site-packages" and Path(p).is_dir()]
    confinement = dataclasses.replace(
        task.confinement,
        uid=bwrap.NOBODY if os.geteuid() == 0 else None,
        readable=tuple(dict.fromkeys([*bwrap.readable_paths(), *packages])),
    )
    return grade(dataclasses.replace(task, confinement=confinement, cgroup_parent=parent))


def _grade_staged(task: Task, root: Path, staged: Path, names: list[str]) -> list[GradeRecord]:
    """Grade the staged copy: its notebooks only, in a cgroup of its own."""
    from nbgrader.apps import NbGraderAPI

    from autograder.course import put_interpreter_bin_on_path

    result: list[GradeRecord] = []
    gradable = []
    flags: dict[str, list[integrity.Flag]] = {}
    for name in names:
        trouble = submission.problem(staged / f"{name}.ipynb")
        if trouble:
            (staged / f"{name}.ipynb").unlink(missing_ok=True)
            result.append(_record(task, name, *trouble))
        else:
            gradable.append(name)
            flags[name] = _flags(root, task.assignment, name, staged / f"{name}.ipynb")
    if not gradable:
        return result
    limits = task.confinement.limits
    with stages.timed("zygote"):
        zygote = _zygote(task)
    # Connection file and sockets of this submission's kernels; outside the course.
    workdir = zygote.workdir()
    incident_dir = root / "grading" / "incidents" / task.student / task.assignment
    shutil.rmtree(incident_dir, ignore_errors=True)
    put_interpreter_bin_on_path()
    group = None
    try:
        if task.cgroup_parent:
            group = task.cgroup_parent.create(limits.memory_bytes, limits.processes)
        confinement = dataclasses.replace(task.confinement, cgroup=group)
        config = _config(task, zygote, workdir, incident_dir, confinement, flags)
        api = NbGraderAPI(config=config)
        mark = zygote.log_mark()
        # A newer submission's autograde clears the earlier one's hand grades; the same
        # submission's keep theirs (hand_grades.py).
        db_url = config.CourseDirectory.db_url
        when = hand_grades.submitted_at(staged)
        before = hand_grades.before_autograde(db_url, task.assignment, task.student, when)
        so_far = stages.taken()
        with stages.timed("nbgrader"):
            outcome = api.autograde(task.assignment, task.student, force=True, create=True)
        inside = [v - so_far.get(k, 0.0) for k, v in stages.taken().items() if k != "nbgrader"]
        stages.add("nbgrader", -sum(inside))  # nbgrader's own steps: less the stages inside
        hand_grades.after_autograde(db_url, task.assignment, task.student, before)
    finally:
        with stages.timed("cleanup"):
            verdicts.stop_observers()
            if group:
                group.kill_and_remove()
            shutil.rmtree(workdir, ignore_errors=True)
    said = zygote.last_error(mark)
    for name in gradable:
        if not outcome["success"]:
            result.append(_record(task, name, "error", _failure(outcome, said)))
            continue
        incidents = _read_json(incident_dir / f"{name}.json").get("incidents", [])
        judged = _read_json(incident_dir / "verdicts" / f"{name}.json")
        flags[name] = _judged(flags[name], judged)
        status, reason = _status(incidents, flags[name], limits.notebook_timeout_s)
        cleared = hand_grades.said(before, name)
        if cleared is not None:
            reason = reasons.join(filter(None, (reason, cleared)))
        if said.startswith((forked.OBSERVER, forked.CONFINING)):
            # Said, not an error: the learner's own processes can starve the observer (pids).
            unobserved = reasons.says(*NOT_OBSERVED, said=said)
            reason = reasons.join(filter(None, (reason, unobserved)))
        record = _record(task, name, status, reason)
        record.incidents = incidents
        record.flags = [flag.as_dict() for flag in flags[name]]
        record.verdicts = judged.get("verdicts", {})
        result.append(record)
    return result
