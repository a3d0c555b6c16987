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
from nbformat import NotebookNode

import autograder.references  # noqa: F401 - the judge alone computes with the references
from autograder.common import hidden_tests, i18n, protocol
from autograder.common.exercise import NotAttempted
from autograder.common.i18n import Text
from autograder.common.observation import InconsistentObservation
from autograder.common.result import CheckFailed

PASSED = Text("✓ all checks passed", "✓ 全部检查通过")
NOT_JUDGED = Text("this test could not be judged: {reason}", "无法评判这个测试：{reason}")
NOT_CONSISTENT = Text(
    "what was recorded while your code was checked is not consistent ({reason}); "
    "this test earns nothing",
    "检查你的代码时记录下的结果前后矛盾（{reason}），这个测试不计分",
)
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
        "your code could not be run on its own: {reason}",
        "你的代码无法单独运行：{reason}",
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


def visible_part(source: str) -> str:
    """A test cell's code without its hidden tests, as nbgrader's ClearHiddenTests removes them."""
    from nbgrader.preprocessors import ClearHiddenTests

    cell = NotebookNode(cell_type="code", source=source, metadata={}, outputs=[])
    try:
        ClearHiddenTests(enforce_metadata=False).preprocess_cell(cell, {}, 0)
    except RuntimeError:  # unbalanced markers: keep everything before the first one
        return source.split("### BEGIN HIDDEN TESTS")[0]
    return cell.source


def _observations(observed: dict) -> list[tuple[str, dict]]:
    """The recorded (check key, observation) pairs; any other shape is refused."""
    found = observed.get("observations", [])
    if type(found) is not list or not all(
        type(pair) in (list, tuple) and len(pair) == 2 and type(pair[0]) is str for pair in found
    ):
        raise InconsistentObservation("observation not consistent: not a list of observations")
    return [(key, observation) for key, observation in found]


def judge_cell(
    source: str, observed: dict, lang: str, subset: bool = False, salt: int = 0
) -> Verdict:
    """Run the test cell's checks against the observer's record for it, in ``lang``.

    Every recorded observation must be judged (``subset``: ``source`` runs only some of
    the recorded checks, e.g. a test cell without its hidden tests). ``salt``: the one the
    observer ran the hidden tests with (``hidden_tests``).
    """
    i18n.set_language(lang)
    status = observed.get("status", "missing") if type(observed) is dict else "not plain data"
    if status != "ok":
        text = OBSERVER_TROUBLE.get(status, NOT_JUDGED).format(
            reason=observed.get("reason", status) if type(observed) is dict else status
        )
        return Verdict(False, text(lang))
    scope = {"__builtins__": builtins, "torch": torch}
    try:
        protocol.MODE.judge(_observations(observed), subset)
        names = _Placeholders(scope)
        hidden_tests.run(source, salt, lambda code: _exec_test(code, scope, names))
        if protocol.MODE.replay and not subset:
            unjudged = len(protocol.MODE.replay)
            raise InconsistentObservation(f"{unjudged} more observations than checks")
    except NotAttempted as failure:
        return Verdict(False, failure.feedback(lang), not_attempted=True)
    except CheckFailed as failure:
        return Verdict(False, failure.feedback(lang), tuple(dict.fromkeys(failure.misconceptions)))
    except InconsistentObservation as refused:
        reason = str(refused).removeprefix("observation not consistent: ")[:300]
        return Verdict(False, NOT_CONSISTENT.format(reason=reason)(lang))
    except Exception as error:  # a check that cannot judge gives no points and says why
        reason = f"{type(error).__name__}: {error}"[:300]
        return Verdict(False, NOT_JUDGED.format(reason=reason)(lang))
    else:
        notes = [f"  {text(lang)}" for text in protocol.MODE.notes]
        return Verdict(True, "\n".join([PASSED(lang), *notes]))
    finally:
        protocol.MODE.reset()


def _exec_test(code: str, scope: dict, names: _Placeholders) -> None:
    exec(compile(code, "<test cell>", "exec"), scope, names)  # noqa: S102 - course code


def visible_checks_pass(source: str, observed: dict, lang: str) -> bool:
    """Whether the test cell's visible checks pass: what its first run (without hidden tests)
    should have said."""
    return judge_cell(visible_part(source), observed, lang, subset=True).passed
