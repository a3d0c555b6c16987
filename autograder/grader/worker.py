"""Grade one learner's submission of one assignment with nbgrader, sandboxed.

This is the unit of work that local processes (or Dask workers) run. It only
reads the course through nbgrader and writes the gradebook, the autograded
notebooks and its records; learner code runs in the sandboxed kernel.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder import course
from autograder.grader import integrity, limits, records, submission, verdicts
from autograder.grader.limits import Limits
from autograder.grader.records import GradeRecord

STAGING = "grading/staged"
GRADEBOOK_WAIT_S = 120  # parallel workers write one SQLite gradebook


@dataclass(frozen=True)
class Task:
    """Everything a worker needs to grade one submission; plain data, picklable."""

    course_root: str
    assignment: str
    student: str
    sandbox_kind: str
    hidden_paths: tuple[str, ...]
    limits: Limits
    threads: int = 0  # CPU threads per kernel, so that parallel kernels do not oversubscribe


def _config(
    task: Task,
    workdir: Path,
    observer_dir: Path,
    incident_dir: Path,
    cgroup: Path | None,
    read_flags: dict[str, list[integrity.Flag]],
):
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.grader.execute import SandboxedExecute
    from autograder.grader.sandbox import Sandbox
    from autograder.grader.verdicts import JudgeTestCells, ObserveTestCells

    root = Path(task.course_root)
    config = Config(PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config())
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.submitted_directory = STAGING
    config.CourseDirectory.db_url = course.gradebook_url(root, GRADEBOOK_WAIT_S)
    steps = []
    for step in Autograde.class_traits()["autograde_preprocessors"].default():
        steps += [ObserveTestCells, SandboxedExecute, JudgeTestCells] if step is Execute else [step]
    config.Autograde.autograde_preprocessors = steps
    config.SandboxedExecute.timeout = task.limits.cell_timeout_s
    config.SandboxedExecute.memory_bytes = task.limits.memory_bytes
    config.SandboxedExecute.max_processes = task.limits.processes
    config.SandboxedExecute.sandbox_kind = task.sandbox_kind
    config.SandboxedExecute.hidden_paths = list(task.hidden_paths)
    config.SandboxedExecute.workdir = str(workdir)
    config.SandboxedExecute.incident_dir = str(incident_dir)
    config.SandboxedExecute.pids_cgroup = str(cgroup) if cgroup else ""
    config.SandboxedExecute.feedback_language = course.language(root)
    config.SandboxedExecute.threads = task.threads
    sandbox = Sandbox(task.sandbox_kind, tuple(Path(p) for p in task.hidden_paths))
    config.ObserveTestCells.source_dir = str(root / "source" / task.assignment)
    config.ObserveTestCells.cell_timeout = task.limits.cell_timeout_s
    config.ObserveTestCells.threads = task.threads
    config.ObserveTestCells.workdir = str(observer_dir)
    config.ObserveTestCells.observer_prefix = task.limits.launcher_argv(
        str(cgroup) if cgroup else ""
    ) + sandbox.wrap([], observer_dir)
    config.JudgeTestCells.language = course.language(root)
    config.JudgeTestCells.report_dir = str(incident_dir / "verdicts")
    config.JudgeTestCells.voided = {
        name: {gid: flag.describe() for flag in found for gid in flag.voids}
        for name, found in read_flags.items()
    }
    return config


def _status(incidents: list[dict], flags: list[integrity.Flag]) -> tuple[str, str]:
    """Crashes, then timeouts, then integrity flags decide the status; the reason lists all."""
    kinds = [i["kind"] for i in incidents]
    if "crashed" in kinds:
        status = "crashed"
    elif kinds:
        status = "timed out"
    else:
        status = "flagged" if flags else "graded"
    parts = [f"{i['kind']} in {i['cell']}" for i in incidents]
    parts += [flag.describe() for flag in flags]
    return status, "; ".join(parts)


def _flags(root: Path, assignment: str, name: str, path: Path) -> list[integrity.Flag]:
    source = nbformat.read(str(root / "source" / assignment / f"{name}.ipynb"), as_version=4)
    submitted = nbformat.read(str(path), as_version=4)
    return integrity.structural_flags(source, submitted)


def _judged(found: list[integrity.Flag], report: dict) -> list[integrity.Flag]:
    """Add the judge step's flags (policy, disagreements) to those found by reading."""
    extra = [
        integrity.Flag(f["kind"], f["cell"], f["detail"], tuple(f["voids"]))
        for f in report.get("flags", [])
    ]
    return found + extra


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def grade(task: Task) -> list[GradeRecord]:
    """Grade one submission; never raises for a learner's fault, always returns records."""
    from nbgrader.apps import NbGraderAPI

    from autograder.course import put_interpreter_bin_on_path

    started = time.monotonic()
    root = Path(task.course_root)
    original = root / "submitted" / task.student / task.assignment
    result: list[GradeRecord] = []
    gradable = []
    flags: dict[str, list[integrity.Flag]] = {}
    for name in submission.expected_notebooks(root, task.assignment):
        trouble = submission.problem(original / f"{name}.ipynb")
        if trouble:
            status, reason = trouble
            result.append(GradeRecord(task.student, task.assignment, name, status, reason))
        else:
            gradable.append(name)
            flags[name] = _flags(root, task.assignment, name, original / f"{name}.ipynb")
    if gradable:
        staged = submission.stage(root, root / STAGING, task.assignment, task.student)
        for name in set(submission.expected_notebooks(root, task.assignment)) - set(gradable):
            (staged / f"{name}.ipynb").unlink(missing_ok=True)
        # The kernel's only writable folder; outside the course, which the sandbox hides.
        scratch = Path(tempfile.mkdtemp(prefix="course-kernel-"))
        # The observer's own scratch: the kernel, which runs learner code first, cannot see it.
        observer_scratch = Path(tempfile.mkdtemp(prefix="course-observer-"))
        incident_dir = root / "grading" / "incidents" / task.student / task.assignment
        shutil.rmtree(incident_dir, ignore_errors=True)
        put_interpreter_bin_on_path()
        cgroup = limits.make_pids_cgroup(task.limits.processes)
        try:
            config = _config(task, scratch, observer_scratch, incident_dir, cgroup, flags)
            api = NbGraderAPI(config=config)
            outcome = api.autograde(task.assignment, task.student, force=True, create=True)
        finally:
            verdicts.stop_observers()
            limits.remove_pids_cgroup(cgroup)
            shutil.rmtree(scratch, ignore_errors=True)
            shutil.rmtree(observer_scratch, ignore_errors=True)
            shutil.rmtree(staged, ignore_errors=True)
        for name in gradable:
            if not outcome["success"]:
                log = (outcome.get("error") or outcome.get("log") or "").strip().splitlines()
                reason = "nbgrader could not grade it: " + (log[-1] if log else "no log")
                result.append(GradeRecord(task.student, task.assignment, name, "error", reason))
                continue
            incidents = _read_json(incident_dir / f"{name}.json").get("incidents", [])
            judged = _read_json(incident_dir / "verdicts" / f"{name}.json")
            flags[name] = _judged(flags[name], judged)
            status, reason = _status(incidents, flags[name])
            found = [flag.as_dict() for flag in flags[name]]
            record = GradeRecord(
                task.student, task.assignment, name, status, reason, incidents, found
            )
            record.verdicts = judged.get("verdicts", {})
            result.append(record)
    elapsed = time.monotonic() - started
    for record in result:
        record.sandbox = task.sandbox_kind
        record.seconds = round(elapsed, 2)
        records.save(root, record)
    return result
