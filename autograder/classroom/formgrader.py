"""The formgrader's own Autograde and Generate Feedback, routed to ``course-grade``.

nbgrader's buttons (and ``nbgrader autograde`` / ``generate_feedback``) would run learner
code in the instructor's own server, unsandboxed, and write feedback that shows the hidden
tests. The instructor's nbgrader settings make both use :class:`UseCourseGrade` as their
exporter (nbgrader's ``exporter_class`` option): it refuses before nbgrader touches the
gradebook or the graded notebooks, with the command to run instead. ``course-grade`` builds
its own nbgrader configuration from the course's file alone, so it is not affected.
"""

from __future__ import annotations

from nbconvert.exporters import Exporter
from nbgrader.converters import NbGraderException

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
