"""The start-up probe: before grading, one real kernel and one real observer, confined.

A machine can have every protection and still be unable to grade: the Python
environment may not be visible inside the sandbox, a limit may be too small for
a kernel to start. Then every submission would end in ``error``. The probe runs in
a grading worker before any submission is handed out: the zygote that worker uses
(the run's) forks a kernel that runs one cell and an observer that observes one
test cell, in a cgroup of their own with the run's limits, and the probe says what went wrong,
with the child's own last error line. It starts no zygote of its own (one more
import of torch and the course per run, most of a small run's start-up).
"""

from __future__ import annotations

import dataclasses
import shutil

from autograder.grader.sandbox import forked
from autograder.grader.sandbox.bwrap import Confinement, learner_environment, learner_scratch
from autograder.grader.sandbox.cgroups import CgroupParent

CELL, PRINTED = "print(6 * 7)", "42"
TIMEOUT_S = 120


def failure(
    confinement: Confinement, parent: CgroupParent | None, zygote: forked.Zygote
) -> str | None:
    """None when a confined kernel runs a cell and a confined observer reports; else why not.

    ``zygote``: the worker's, as its submissions will use it (left running).
    """
    group = None
    try:
        if parent is not None:
            group = parent.create(confinement.limits.memory_bytes, confinement.limits.processes)
        confined = dataclasses.replace(confinement, cgroup=group)
        mark = zygote.log_mark()
        problem = _kernel_problem(zygote, confined) or _observer_problem(zygote, confined)
        said = zygote.last_error(mark)
        return problem + (f"; {said}" if said else "") if problem else None
    except Exception as error:  # the probe itself broke: say so instead of a bare traceback
        return f"the start-up probe failed: {type(error).__name__}: {error}"
    finally:
        if group is not None:
            group.kill_and_remove()


def _kernel_problem(zygote: forked.Zygote, confinement: Confinement) -> str | None:
    import nbformat
    from nbclient import NotebookClient

    from autograder.grader.sandbox.kernel import SandboxedKernelManager

    workdir = zygote.workdir()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    manager = SandboxedKernelManager(
        kernel_name="python3", workdir=str(workdir), confinement=confinement, zygote=zygote
    )
    client = NotebookClient(
        notebook, km=manager, timeout=TIMEOUT_S, startup_timeout=TIMEOUT_S, kernel_name="python3"
    )
    try:
        client.execute()
    except Exception as error:
        return f"a confined kernel could not run a cell: {type(error).__name__}: {error}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    printed = "".join(o.get("text", "") for o in notebook.cells[0].outputs).strip()
    if printed != PRINTED:
        return f"a confined kernel ran `{CELL}` and printed {printed!r}"
    return None


def _observer_problem(zygote: forked.Zygote, confinement: Confinement) -> str | None:
    import nbformat

    from autograder.grader.pipeline.verdicts import ObserveTestCells

    test = nbformat.v4.new_code_cell("assert x == 42")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "probe"}
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 6 * 7"), test])
    folder = zygote.workdir()  # the scratch of an --unsafe run
    step = ObserveTestCells(
        cell_timeout=TIMEOUT_S,
        threads=1,
        zygote=zygote,
        cgroup=confinement.cgroup,
        env=learner_environment(confinement, str(folder), 1),
        cwd=learner_scratch(confinement, str(folder)),
    )
    try:
        _, resources = step.preprocess(notebook, {"unique_key": "probe"})
        observed = resources["observation"].collect().get("probe", {})
    except forked.ZygoteError as error:
        return f"a confined observer did not start: {error}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if observed.get("status") != "ok":
        found = observed.get("reason") or "nothing"
        return f"a confined observer did not observe a test cell (it reported {found})"
    return None
