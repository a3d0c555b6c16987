"""Checks and helpers for the autograd course's notebooks and grading.

A lesson's first cell runs ``autograder.setup("en")`` (or ``"zh"``) before any
learner code, which fixes the feedback language and the trusted references the
checks use. Importing the package itself stays light (no torch), because the
course's command-line tools and nbgrader's course configuration import it too.
"""

from autograder.common.i18n import Text, get_language, set_language
from autograder.common.result import CheckFailed, CheckResult

_SETUP_DONE = Text(
    "Course set-up: feedback in English, device: {device}",
    "课程设置：反馈使用中文，设备：{device}",
)

__all__ = ["CheckFailed", "CheckResult", "course_device", "get_language", "set_language", "setup"]


def __getattr__(name: str):
    """``autograder.course_device`` imports torch only when it is first asked for."""
    if name == "course_device":
        from autograder.kernel.device import course_device

        return course_device
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")


def setup(lang: str) -> "torch.device":  # noqa: F821
    """Take the trusted references, choose the feedback language, make figures render
    Chinese, return the course device."""
    from autograder.common import trusted  # noqa: F401  (taken before any learner code runs)
    from autograder.kernel.device import course_device
    from autograder.kernel.fonts import use_cjk_font
    from autograder.kernel.run_first import install as explain_cells_run_too_early

    set_language(lang)
    use_cjk_font()
    explain_cells_run_too_early()
    device = course_device()
    print(_SETUP_DONE().format(device=device))
    return device
