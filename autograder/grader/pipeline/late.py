"""The course's late-work policy: nbgrader's late-submission plugin, a share per day late.

nbgrader keeps the due date (``nbgrader db assignment add LESSON --duedate=…``), the time of
each submission and how late it was; when it autogrades a notebook it asks the plugin set in
``nbgrader_config.py`` (``c.AssignLatePenalties.plugin_class``) for the penalty and stores it
beside the score. ``course-grade grade`` runs nbgrader's own autograde steps, so the plugin is
applied there too; the export, the report and the feedback read the stored penalty.
"""

from __future__ import annotations

import math
from pathlib import Path

from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Float, Unicode

from autograder.common.i18n import Text

DAY_S = 24 * 3600
PLUGIN = "autograder.grader.pipeline.late.PercentPerDay"


class PercentPerDay(LateSubmissionPlugin):
    """Take ``percent_per_day`` of the notebook's points for every day or part of a day late
    (after ``grace_minutes``), at most ``max_percent``."""

    percent_per_day = Float(10.0, help="share of the score taken per day late, in %").tag(
        config=True
    )
    max_percent = Float(100.0, help="the most that lateness may take, in % of the score").tag(
        config=True
    )
    grace_minutes = Float(0.0, help="minutes after the due date that do not count").tag(config=True)

    def percent(self, total_seconds_late: float) -> float:
        """The share of the score lateness takes, in %."""
        counted = total_seconds_late - 60 * self.grace_minutes
        if counted <= 0:
            return 0.0
        return min(self.max_percent, self.percent_per_day * math.ceil(counted / DAY_S))

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        return score * self.percent(total_seconds_late) / 100


POLICY = Text(
    "Late work: {per_day:g} % of the points per day or part of a day after the due date"
    "{grace}, at most {most:g} %.",
    "迟交：截止时间之后每迟交一天（不足一天按一天计）扣除该次得分的 {per_day:g}%{grace}，"
    "最多扣除 {most:g}%。",
)
GRACE = Text(" (the first {minutes:g} minutes do not count)", "（前 {minutes:g} 分钟不计）")
NO_POLICY = Text(
    "Late work: nbgrader's own plugin ({method}).", "迟交：使用 nbgrader 自带的插件（{method}）。"
)


def configured(course_root: Path) -> LateSubmissionPlugin:
    """The late-submission plugin the course's nbgrader_config.py sets, configured as there."""
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    config = Config(PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config())
    step = AssignLatePenalties(config=config)
    step.init_plugin()
    return step.plugin_inst


def describe(course_root: Path, lang: str) -> str:
    """The course's late policy in a sentence, in ``lang``."""
    plugin = configured(course_root)
    if not isinstance(plugin, PercentPerDay):
        return NO_POLICY(lang).format(
            method=getattr(plugin, "penalty_method", type(plugin).__name__)
        )
    grace = GRACE(lang).format(minutes=plugin.grace_minutes) if plugin.grace_minutes else ""
    return POLICY(lang).format(per_day=plugin.percent_per_day, most=plugin.max_percent, grace=grace)


DURATION = {
    "en": ("{days} d {hours} h", "{hours} h {minutes} min"),
    "zh": ("{days} 天 {hours} 小时", "{hours} 小时 {minutes} 分钟"),
}


def duration(seconds: float, lang: str) -> str:
    """How late, in days and hours (minutes under a day), in ``lang``."""
    minutes = math.ceil(seconds / 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    long, short = DURATION[lang]
    return (long if days else short).format(days=days, hours=hours, minutes=minutes)


class ShowLateness(NbGraderPreprocessor):
    """Give the feedback page how late the submission was and the course's policy
    (nbgrader's GetGrades gives it the penalty), in the course's language."""

    course_root = Unicode("", help="the course folder: its language and late policy").tag(
        config=True
    )

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        from autograder import course

        root = Path(self.course_root)
        lang = course.language(root)
        about = resources["nbgrader"]
        with Gradebook(about["db_url"]) as gradebook:
            late = gradebook.find_submission(about["assignment"], about["student"])
            seconds = float(late.total_seconds_late)
        about["late_by"] = duration(seconds, lang) if seconds > 0 else ""
        about["late_policy"] = describe(root, lang) if seconds > 0 else ""
        return nb, resources
