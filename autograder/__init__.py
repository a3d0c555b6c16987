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

_OTHER_TORCH = Text(
    "Note: this kernel runs torch {here}, and the results the checks compare with were "
    "computed with torch {shipped}, the course's version. Some values differ between versions "
    "(random inputs in bfloat16 above all), so a right answer can fail a check here: install "
    "the course's environment (`make lab`) before you trust such a failure.",
    "注意：这个内核运行的是 torch {here}，而检查用来比较的预期结果是用课程指定的 torch "
    "{shipped} 计算的。不同版本之间有些数值不同（尤其是 bfloat16 的随机输入），所以正确的答案"
    "在这里也可能无法通过检查：请先安装课程的环境（`make lab`），再相信这样的失败。",
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
    import torch

    from autograder.common import trusted  # noqa: F401  (taken before any learner code runs)
    from autograder.common.expectations import other_torch
    from autograder.kernel.device import course_device
    from autograder.kernel.fonts import use_cjk_font
    from autograder.kernel.run_first import install as explain_cells_run_too_early

    set_language(lang)
    use_cjk_font()
    explain_cells_run_too_early()
    device = course_device()
    print(_SETUP_DONE().format(device=device))
    shipped = other_torch()
    if shipped is not None:
        print(_OTHER_TORCH().format(here=torch.__version__, shipped=shipped))
    return device
