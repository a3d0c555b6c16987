"""Decide a test cell's verdict in the grader's own process, from observations alone.

The test cell's source is the instructor's (nbgrader restores it from the source
notebook). It runs here in judge mode: every name it takes from the learner's
notebook is a placeholder that cannot be called, and each check takes the
observation the sandboxed observer recorded for it. No learner code ever ran in
this process, so nothing a learner did to an interpreter can reach the verdict.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

import torch

from autograder.common import i18n, protocol
from autograder.common.exercise import NotAttempted
from autograder.common.i18n import Text
from autograder.common.result import CheckFailed

PASSED = Text("✓ all checks passed", "✓ 全部检查通过")
NOT_JUDGED = Text("this test could not be judged: {reason}", "无法评判这个测试：{reason}")
OBSERVER_TROUBLE = {
    "timed out": Text(
        "your code ran longer than the time limit while it was being checked",
        "检查时你的代码运行超过了时间限制",
    ),
    "crashed": Text(
        "the process running your code died while it was being checked (os._exit, a crash, "
        "or the memory limit)",
        "检查时运行你代码的进程退出了（os._exit、崩溃或超出内存限制）",
    ),
    "error": Text(
        "your definitions could not be run on their own: {reason}",
        "你的定义无法单独运行：{reason}",
    ),
}


@dataclass(frozen=True)
class Verdict:
    """What the grader decided for one test cell."""

    passed: bool
    feedback: str
    misconceptions: tuple[str, ...] = field(default_factory=tuple)
    not_attempted: bool = False


class LearnerName:
    """Stands for a learner's function in judge mode: there is nothing here to call."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"judge mode never calls learner code ({self.name})")


class _Placeholders(dict):
    """The test cell's names: the course's own (torch, builtins), else a learner placeholder."""

    def __init__(self, known: dict):
        super().__init__()
        self.known = known

    def __missing__(self, name: str):
        if name in self.known:
            return self.known[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return LearnerName(name)


def judge_cell(source: str, observed: dict, lang: str) -> Verdict:
    """Run the test cell's checks against the observer's record for it, in ``lang``."""
    i18n.set_language(lang)
    status = observed.get("status", "missing")
    if status != "ok":
        text = OBSERVER_TROUBLE.get(status, NOT_JUDGED).format(
            reason=observed.get("reason", status)
        )
        return Verdict(False, text(lang))
    protocol.MODE.judge(observed.get("observations", []))
    scope = {"__builtins__": builtins, "torch": torch}
    try:
        exec(compile(source, "<test cell>", "exec"), scope, _Placeholders(scope))  # noqa: S102
    except NotAttempted as failure:
        return Verdict(False, failure.feedback(lang), not_attempted=True)
    except CheckFailed as failure:
        return Verdict(False, failure.feedback(lang), tuple(dict.fromkeys(failure.misconceptions)))
    except Exception as error:  # a check that cannot judge gives no points and says why
        reason = f"{type(error).__name__}: {error}"[:300]
        return Verdict(False, NOT_JUDGED.format(reason=reason)(lang))
    else:
        notes = [f"  {text(lang)}" for text in protocol.MODE.notes]
        return Verdict(True, "\n".join([PASSED(lang), *notes]))
    finally:
        protocol.MODE.reset()
