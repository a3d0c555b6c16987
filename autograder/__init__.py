"""Checks and helpers for the autograd course's notebooks and grading.

A lesson's first cell runs ``autograder.setup("en")`` (or ``"zh"``) before any
learner code, which fixes the feedback language and the trusted references the
checks use.
"""

from autograder.common import trusted  # noqa: F401  (taken before any learner code runs)
from autograder.common.i18n import Text, get_language, set_language
from autograder.common.result import CheckFailed, CheckResult
from autograder.kernel.device import course_device

_SETUP_DONE = Text(
    "Course set-up: feedback in English, device: {device}",
    "课程设置：反馈使用中文，设备：{device}",
)

__all__ = ["CheckFailed", "CheckResult", "course_device", "get_language", "set_language", "setup"]


def setup(lang: str) -> "torch.device":  # noqa: F821
    """Choose the feedback language, make figures render Chinese, return the course device."""
    from autograder.kernel.fonts import use_cjk_font

    set_language(lang)
    use_cjk_font()
    device = course_device()
    print(_SETUP_DONE().format(device=device))
    return device
