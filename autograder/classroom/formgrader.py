"""The classroom's formgrader: its Autograde and Generate Feedback go through ``course-grade``.

nbgrader's own would run learner code in the instructor's server, unsandboxed, and write
feedback that shows the hidden tests. This server extension (enabled instead of nbgrader's
formgrader in jupyter-config/classroom-instructor) serves nbgrader's formgrader with those
buttons' routes answered by ``course-grade``, run as the server's user, the instructor:
Autograde grades that one submission sandboxed on the classroom's grading cluster
(``course-classroom cluster``, which leaves its address beside its certificate), Generate
Feedback writes feedback without hidden tests. The page then shows what course-grade wrote
in the gradebook.

In a terminal, ``nbgrader autograde`` and ``generate_feedback`` would do what the buttons
did: the instructor's nbgrader settings make both use :class:`UseCourseGrade` as their
exporter (nbgrader's ``exporter_class`` option), which refuses before nbgrader touches the
gradebook or the graded notebooks, naming the command to run instead. ``course-grade``
builds its own nbgrader configuration from the course's file alone, so it is not affected.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from jupyter_server.utils import url_path_join
from nbconvert.exporters import Exporter
from nbgrader.converters import NbGraderException
from nbgrader.server_extensions.formgrader import formgrader
from nbgrader.server_extensions.formgrader.base import (
    BaseApiHandler,
    check_notebook_dir,
    check_xsrf,
)
from tornado import web

from autograder.classroom import cluster
from autograder.grader.pipeline import submission

COURSE_GRADE = [sys.executable, "-m", "autograder.grader.cli"]  # as the server's own Python
COURSE_GRADE_TIMEOUT_S = 3000  # below the classroom proxy's request timeout (hub_config.py)

MESSAGES = {
    "Autograde": (
        "In the classroom, grade with `course-grade grade COURSE LESSON` (sandboxed), not "
        "nbgrader's Autograde. / 课堂中请用 `course-grade grade 课程目录 课程名` 评分（在沙箱中"
        "运行），不要用 nbgrader 的 Autograde。"
    ),
    "GenerateFeedback": (
        "In the classroom, write feedback with `course-grade feedback COURSE LESSON` (no "
        "hidden tests), not nbgrader's Generate Feedback. / 课堂中请用 `course-grade feedback "
        "课程目录 课程名` 生成反馈（不含隐藏测试），不要用 nbgrader 的 Generate Feedback。"
    ),
}


class UseCourseGrade(Exporter):
    """An exporter that refuses to be made, naming the ``course-grade`` command to use."""

    def __init__(self, *args, parent=None, **kwargs):
        step = type(parent).__name__ if parent is not None else "Autograde"
        raise NbGraderException(MESSAGES.get(step, MESSAGES["Autograde"]))


def _no_cluster(classroom: str, course: Path, assignment: str, student: str) -> str:
    """Why Autograde grades nothing without the cluster, and the two ways to grade."""
    return (
        "No grading cluster of this classroom is running, and grading runs learner code only "
        f"in its sandbox. Start it as root: `course-classroom cluster {classroom}`, then "
        f"Autograde again; or grade as root: `course-grade grade {course} {assignment} "
        f"--student {student}`. / 本教室的评分集群没有运行，而学生代码只能在它的沙箱中评分。请以 "
        f"root 身份启动：`course-classroom cluster {classroom}`，然后再点 Autograde；或以 root "
        f"身份评分：`course-grade grade {course} {assignment} --student {student}`。"
    )


def _submitted(course: Path, assignment: str, student: str | None) -> str | None:
    """Why the names in the URL are not a collected submission of ``course`` (or, without a
    student, an assignment with collected submissions); None when they are."""
    names = [assignment] if student is None else [assignment, student]
    plain = all(submission.valid_learner_id(name) for name in names)  # no glob, option or path
    found = plain and (
        any((course / "submitted").glob(f"*/{assignment}"))
        if student is None
        else (course / "submitted" / student / assignment).is_dir()
    )
    if found:
        return None
    shown = assignment if student is None else f"{student}/{assignment}"
    return (
        f"No collected submission {shown!r} in {course}. / {course} 中没有已收取的提交 {shown!r}。"
    )


def _cluster_address(classroom: str) -> str:
    """The address of the classroom's running grading cluster; "" when none runs."""
    if not classroom:
        return ""
    try:
        written = cluster.certificate_folder(Path(classroom)) / cluster.ADDRESS
        return written.read_text(encoding="ascii").strip()
    except OSError:
        return ""


def grade_command(course: Path, assignment: str, student: str) -> list[str] | str:
    """``course-grade grade`` of one submission on the classroom's cluster, or why not."""
    refused = _submitted(course, assignment, student)
    if refused:
        return refused
    classroom = os.environ.get("COURSE_CLASSROOM", "")
    address = _cluster_address(classroom)
    if not address:
        return _no_cluster(classroom or "CLASSROOM", course, assignment, student)
    certificates = str(cluster.certificate_folder(Path(classroom)))
    command = [*COURSE_GRADE, "grade", str(course), assignment, "--student", student]
    return command + ["--scheduler", address, "--tls", certificates]


def feedback_command(course: Path, assignment: str, student: str | None) -> list[str] | str:
    """``course-grade feedback`` of one submission (or all of an assignment), or why not."""
    refused = _submitted(course, assignment, student)
    if refused:
        return refused
    command = [*COURSE_GRADE, "feedback", str(course), assignment]
    return command + (["--student", student] if student else [])


async def run(command: list[str] | str, cwd: Path) -> dict:
    """Run a course-grade command; its outcome as nbgrader's API reports one to the page."""
    if isinstance(command, str):
        return {"success": False, "error": command}
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), COURSE_GRADE_TIMEOUT_S)
    except TimeoutError:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = await process.communicate()
    log = output.decode("utf-8", errors="replace")
    if process.returncode == 0:
        return {"success": True, "log": log}
    name = f"course-grade {command[len(COURSE_GRADE)]}"
    if process.returncode < 0:
        error = (
            f"`{name}` ran past {COURSE_GRADE_TIMEOUT_S} s and was stopped. / "
            f"`{name}` 运行超过 {COURSE_GRADE_TIMEOUT_S} 秒，已被停止。"
        )
    else:
        error = (
            f"`{name}` ended with exit status {process.returncode}: see its output above. / "
            f"`{name}` 以退出状态 {process.returncode} 结束，见上方的输出。"
        )
    return {"success": False, "log": log, "error": error}


class _CourseGradeHandler(BaseApiHandler):
    async def answer(self, command: list[str] | str) -> None:
        outcome = await run(command, Path(self.coursedir.root))
        self.finish(json.dumps(outcome))  # as text: nbgrader's page parses it itself


class AutogradeHandler(_CourseGradeHandler):
    """Autograde of one submission: ``course-grade grade`` on the classroom's cluster."""

    @web.authenticated
    @check_xsrf
    @check_notebook_dir
    async def post(self, assignment_id, student_id):
        course = Path(self.coursedir.root)
        await self.answer(grade_command(course, assignment_id, student_id))


class GenerateFeedbackHandler(_CourseGradeHandler):
    """Generate Feedback of one submission or a whole assignment: ``course-grade feedback``."""

    @web.authenticated
    @check_xsrf
    @check_notebook_dir
    async def post(self, assignment_id, student_id=None):
        course = Path(self.coursedir.root)
        await self.answer(feedback_command(course, assignment_id, student_id))


ROUTES = [
    (r"/formgrader/api/submission/([^/]+)/([^/]+)/autograde", AutogradeHandler),
    (r"/formgrader/api/assignment/([^/]+)/generate_feedback", GenerateFeedbackHandler),
    (r"/formgrader/api/assignment/([^/]+)/([^/]+)/generate_feedback", GenerateFeedbackHandler),
]


def _jupyter_server_extension_points():
    return [{"module": "autograder.classroom.formgrader"}]


def _load_jupyter_server_extension(serverapp):
    """nbgrader's formgrader, with the routes above added first (tornado takes the first
    match, in the order handlers were added)."""
    webapp = serverapp.web_app
    base = webapp.settings["base_url"]
    webapp.add_handlers(".*$", [(url_path_join(base, route), h) for route, h in ROUTES])
    formgrader.load_jupyter_server_extension(serverapp)
