"""Grading works wherever the course and its environment live, and says why when it cannot.

Every sandboxed child mounts a fresh ``/tmp``; an environment or a clone under
``/tmp`` must still be there for it. A machine where grading cannot work is
refused before grading, with the kernel's own last error; a submission that
ends in ``error`` makes ``course-grade grade`` exit 1 and names the cause.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from processes import venv_env

from autograder.grader.pipeline import records
from autograder.grader.sandbox import bwrap, forked

REPO = Path(__file__).resolve().parent.parent
LESSON = "01_requires_grad"
IS_ROOT = os.geteuid() == 0

pytestmark = [
    pytest.mark.notebooks,
    pytest.mark.skipif(not shutil.which("bwrap"), reason="skipped: bubblewrap is not installed"),
]


def course_grade(*args: str, wrapper=(), python: str = sys.executable, **env: str):
    command = [*wrapper, python, "-m", "autograder.grader.cli", *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        env=venv_env(PYTHONPATH=env.pop("PYTHONPATH", str(REPO)), **env),
        check=False,
    )


@pytest.fixture
def demo(tmp_path, make_course) -> Path:
    """A course (under /tmp, where pytest keeps it) with the demo class submitted."""
    root = make_course(tmp_path / "course")
    assert course_grade("demo-class", str(root), LESSON).returncode == 0
    return root


def _record(root: Path, student: str) -> records.GradeRecord:
    (found,) = [r for r in records.load(root, LESSON) if r.student == student]
    return found


@pytest.mark.skipif(
    not IS_ROOT or not shutil.which("unshare"),
    reason="skipped: a private mount namespace (unshare -m) needs root",
)
def test_grading_works_with_the_environment_and_the_package_under_tmp(demo, tmp_path):
    """The repository and its environment seen under /tmp, as a clone there would be."""
    clone = tmp_path / "clone"  # tmp_path lies under /tmp
    clone.mkdir()
    prefix = Path(sys.prefix)
    mounts = f"mount --rbind {REPO} {clone}; "
    if prefix.is_relative_to(REPO):
        python = clone / Path(sys.executable).relative_to(REPO)
    else:  # an environment outside the repository goes under /tmp too
        (tmp_path / "env").mkdir()
        mounts += f"mount --rbind {prefix} {tmp_path / 'env'}; "
        python = tmp_path / "env" / Path(sys.executable).relative_to(prefix)
    script = f'set -e; {mounts}cd {clone}; exec "$@"'
    wrapper = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
    args = ("grade", str(demo), LESSON, "--student", "solution", "--workers", "1")
    done = course_grade(*args, wrapper=wrapper, python=str(python), PYTHONPATH=str(clone))
    assert done.returncode == 0, done.stderr[-3000:]
    record = _record(demo, "solution")
    assert record.status == "graded", record.reason
    assert all(v["passed"] for v in record.verdicts.values()), record.verdicts


def test_a_kernel_that_cannot_start_is_refused_up_front_with_its_own_error(demo):
    """Too few processes for a kernel's threads: the probe's kernel says so, nothing is graded."""
    args = ("grade", str(demo), LESSON, "--student", "solution", "--workers", "1")
    done = course_grade(*args, "--processes", "5")
    assert done.returncode == 2, done.stderr[-3000:]
    assert "a confined kernel could not run a cell" in done.stderr, done.stderr[-3000:]
    assert "the kernel: RuntimeError: can't start new thread" in done.stderr, done.stderr[-3000:]
    assert "--processes" in done.stderr
    assert records.load(demo, LESSON) == []


def test_a_submission_that_cannot_be_graded_fails_the_run_with_its_reason(demo):
    """A course whose kernel cannot start (a kernel name that does not exist): exit 1."""
    with (demo / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write('\nc.SandboxedExecute.kernel_name = "no-such-kernel"\n')
    args = ("grade", str(demo), LESSON, "--student", "solution", "--student", "blank")
    done = course_grade(*args, "--workers", "1")
    assert done.returncode == 1, done.stderr[-3000:]
    cause = "NoSuchKernel: No such kernel named no-such-kernel"
    for student in ("solution", "blank"):
        record = _record(demo, student)
        assert record.status == "error" and cause in record.reason, record.reason
        assert f"error: {student}/{LESSON}: nbgrader could not grade it: " in done.stderr
    assert "Please see the" not in done.stderr  # nbgrader's pointer to a traceback nobody has


def test_a_failed_childs_last_error_names_the_child_and_its_exception():
    """What the zygote's log holds when an observer fails: the reason a record carries."""
    log = (
        "some warning\n"
        "Traceback (most recent call last):\n"
        '  File "/x/autograder/grader/sandbox/zygote.py", line 120, in _child\n'
        "    _run_observer(json.loads(payload[1:]), channel)\n"
        '  File "/x/autograder/grader/sandbox/zygote.py", line 170, in _run_observer\n'
        "    observer.serve(job, os.fdopen(1, 'wb'))\n"
        "ModuleNotFoundError: No module named 'torch.utils.serialization'\n"
    )
    said = forked.last_error(log)
    assert said == "the observer: ModuleNotFoundError: No module named 'torch.utils.serialization'"
    assert forked.last_error("") == ""


def test_the_sandbox_shows_its_read_only_folders_where_they_were_named(tmp_path):
    """A folder named through a link is shown at its real path and at the link's."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    confinement = bwrap.Confinement(readable=(str(tmp_path / "link"),))
    assert bwrap.shown_paths(confinement) == [
        (str(real), str(real)),
        (str(real), str(tmp_path / "link")),
    ]


def test_a_machine_without_libseccomp_is_named_before_grading(monkeypatch, tmp_path):
    from autograder.grader.sandbox import seccomp_filter

    def unavailable():
        raise RuntimeError("Unable to find libseccomp")

    assert "seccomp" not in bwrap.missing_protections(tmp_path)
    monkeypatch.setattr(seccomp_filter, "build", unavailable)
    reason = bwrap.missing_protections(tmp_path)["seccomp"]
    assert "libseccomp" in reason and "apt-get install libseccomp2" in reason
