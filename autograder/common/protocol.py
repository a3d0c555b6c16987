"""How a check reaches its verdict: observe (runs learner code), then judge (pure).

A :class:`Check` is built from the parameters a test cell gives (seed, sizes,
device). Its ``observe(fn)`` calls the learner's function on inputs it makes itself
and returns plain data (see ``observation.py``); its ``judge(obs)`` decides from that
data alone and never calls learner code. The same test cell source runs in three
modes (see docs/grading-design.md):

- **self-study** (the learner's kernel): observe, round-trip the observation through
  the weights-only format, judge, show the feedback;
- **observe** (the sandboxed observer while grading): record the observation, judge
  nothing;
- **judge** (the grader's own process, where no learner code ever ran): take the
  recorded observation, judge it; that verdict alone gives the points.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any, ClassVar

import torch

from autograder.common import global_state as global_settings
from autograder.common import trusted, wire
from autograder.common.exercise import NotAttempted
from autograder.common.i18n import Text, get_language
from autograder.common.inputs import device_name
from autograder.common.observation import (
    InconsistentObservation,
    Seen,
    check_observation,
    snapshot,
)
from autograder.common.result import CheckFailed, CheckResult

NOT_ATTEMPTED = Text(
    "not attempted yet: the function still raises NotImplementedError",
    "尚未作答：函数仍然抛出 NotImplementedError",
)
NO_EXCEPTION = Text("no exception", "不抛出异常")
NOT_CONSISTENT = Text(
    "what was recorded of your function is not consistent ({p}); it earns nothing",
    "记录下来的函数行为前后矛盾（{p}），不计分",
)
CONSISTENT = Text("a consistent observation", "前后一致的观察结果")
PASSED = Text("✓ {ex}: all checks passed", "✓ {ex}：全部检查通过")


class Mode:
    """Where verdicts are being decided right now; one instance per process."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Back to self-study, with nothing recorded or waiting."""
        self.name = "self-study"
        self.quiet = False  # the self-check runs every check without printing each outcome
        self.recorded: list[tuple[str, dict]] = []
        self.replay: list[tuple[str, dict]] = []
        self.subset = False
        self.notes: list[Text] = []  # what a passing judge could not check here ("no GPU")
        self.salt = 0  # while grading a hidden test: the submission's (see ``salted``)

    def observe(self) -> None:
        """Record observations instead of judging (the sandboxed observer)."""
        self.name, self.recorded = "observe", []

    def collect(self) -> None:
        """List the checks test cells make, calling nothing (``references.expected``)."""
        self.name, self.recorded = "collect", []

    def judge(self, observations: list[tuple[str, dict]], subset: bool = False) -> None:
        """Judge recorded observations, in order (the grader's process).

        ``subset``: the source judged runs only some of the recorded checks (a test
        cell without its hidden tests), so observations of other checks are passed over.
        """
        self.name, self.replay, self.subset = "judge", list(observations), subset

    def next_observation(self, key: str) -> dict:
        while self.subset and self.replay and self.replay[0][0] != key:
            self.replay.pop(0)
        if not self.replay:
            return {"observe_error": "missing"}
        found_key, observation = self.replay.pop(0)
        return observation if found_key == key else {"observe_error": "out of order"}


MODE = Mode()


def to_bytes(observation: Any) -> bytes:
    """Serialize plain data (tensors, numbers, strings, containers): ``wire.py``'s format."""
    return wire.dumps(observation)


def from_bytes(data: bytes) -> Any:
    """Read plain data back; anything that could carry code is refused (``wire.py``)."""
    return wire.loads(data)


def cell_record(record: Any) -> dict:
    """One test cell's record from the observer, decoded: its child's bytes as the child
    wrote them (the observer passes them on unread), or the record the observer made itself
    (the child timed out, crashed, said nothing). Anything but plain data is refused."""
    if not isinstance(record, dict):
        try:
            record = from_bytes(record)
        except Exception:  # noqa: BLE001 - whatever the bytes hold, they earn nothing
            record = None
    if isinstance(record, dict):
        return record
    return {"status": "error", "reason": "observations were not plain data", "observations": []}


class Call:
    """The outcome of one call of the learner's function: its value, or what it raised."""

    def __init__(self, value: Any = None, error: BaseException | None = None):
        self.value, self.error = value, error

    @property
    def ok(self) -> bool:
        return self.error is None

    def record(self) -> dict:
        """Plain data: the exception's type and first line, or a snapshot of the value."""
        if self.error is None:
            return {"raised": None, "value": snapshot(self.value)}
        text = str(self.error).splitlines()
        return {
            "raised": trusted.type_(self.error).__name__,
            "message": (text[0] if text else "")[:300],
            "not_implemented": trusted.isinstance_(self.error, NotImplementedError),
        }


def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Call:
    """Call the learner's function; any exception it raises is part of the observation."""
    if not callable(fn):
        return Call(error=TypeError(f"{trusted.type_(fn).__name__} object is not callable"))
    try:
        return Call(_plain(fn(*args, **kwargs)))
    except Exception as error:  # the learner's error is data for the judge
        return Call(error=error)


def _plain(value: Any) -> Any:
    """A namedtuple (or another subclass of tuple or list) as the tuple or list it is, read
    through the base class's own slots: a prompt that asks for a tuple accepts one."""
    kind = trusted.type_(value)
    if kind in (list, tuple) or not trusted.isinstance_(value, (list, tuple)):
        return value
    base = list if trusted.isinstance_(value, list) else tuple
    return base(base.__getitem__(value, k) for k in range(base.__len__(value)))


def returned(
    ex: Text,
    record: dict,
    name: str,
    classify: Callable[[str], str | None] = lambda message: None,
    explain: Callable[[str], Text | None] = lambda message: None,
) -> Seen:
    """The judge's view of a :meth:`Call.record`: the value, or feedback for the exception.

    ``classify`` names the misconception an error message is evidence of, if any;
    ``explain`` gives one line, in the learner's language, on what the quoted
    PyTorch error means.
    """
    if record.get("raised") is None:
        return Seen(record.get("value", {"kind": "none"}))
    if record.get("not_implemented"):
        raise NotAttempted(ex, [CheckResult(NOT_ATTEMPTED, False)])
    message = record.get("message", "")
    what = Text("calling {name}(...)", "调用 {name}(...)").format(name=name)
    found = Text("it raised {kind}: “{msg}”", "抛出了 {kind}：“{msg}”").format(
        kind=record["raised"], msg=message
    )
    note = explain(message)
    if note is not None:
        found = Text(f"{found.en} — {note.en}", f"{found.zh}——{note.zh}")
    raise CheckFailed(ex, [CheckResult(what, False, NO_EXCEPTION, found, classify(message))])


def global_state() -> dict:
    """Every global setting a function must leave as it found it, as plain data.

    The registry (``global_state.SETTINGS``) lists them: grad and inference mode, anomaly
    mode, deterministic algorithms, threads, the default dtype and device, TF32 and
    float32 precision, cuDNN flags, print options, autocast, saved-tensor and global
    module hooks, modes left entered, the random states (recorded only) and more.
    """
    return global_settings.read()


def capture_global_state() -> global_settings.Snapshot:
    """The settings now, with what putting them back needs (hooks, random states)."""
    return global_settings.capture()


def restore_global_state(state: dict | global_settings.Snapshot) -> None:
    """Put the settings back, so that one exercise's slip does not fail the next."""
    global_settings.restore(state)


_STATE_TEXT = {s.name: s.text for s in global_settings.SETTINGS}
_AFTER_RETURN = Text("{what} after your function returned", "函数返回后，{what}")
_LEFT_AS_FOUND = Text("{value}, as before your function ran", "{value}，与调用前相同")


_REFUSED_PREFIX = "observation not consistent: "
_STATE_TYPES = dict(global_settings.TYPES)


def _recorded_state(obs: dict) -> tuple[dict, dict]:
    """The settings before and after the call; an observation without them is refused."""
    state = obs.get("_state")
    sides = [state.get(side) if type(state) is dict else None for side in ("before", "after")]
    for side in sides:
        if type(side) is not dict or set(side) != set(_STATE_TYPES):
            raise InconsistentObservation(_REFUSED_PREFIX + "the global switches are missing")
        if not global_settings.valid(side):
            raise InconsistentObservation(_REFUSED_PREFIX + "global switches of the wrong type")
    return sides[0], sides[1]


def state_changes(before: dict, after: dict) -> list[CheckResult]:
    """A failed result for each global setting the learner's function left changed.

    Settings recorded only (the random states: a right answer may draw from them) never
    fail here; nor does one that could not be read before or after (CUDA not started).
    """
    return [
        CheckResult(
            _AFTER_RETURN.format(what=setting.text),
            False,
            _LEFT_AS_FOUND.format(value=setting.shown(before[setting.name])),
            setting.shown(after[setting.name]),
        )
        for setting in global_settings.changes(before, after)
    ]


# Global module hooks run learner code during every module call of the process; one
# registered before the check starts would run during the check's own calls too, where the
# function it checks never runs (policy_table.ALLOWED_PACKAGES lets graded code use them).
_HOOKS_BEFORE = tuple(
    s for s in global_settings.SETTINGS if s.name.startswith("global_module_") and s.kind is tuple
)
_NO_HOOK_BEFORE = Text(
    "none: remove a global hook (its handle's remove()) before the check runs",
    "没有：在检查运行之前移除全局钩子（调用其句柄的 remove()）",
)
_BEFORE_THE_CALL = Text("{what} before your function was called", "调用你的函数之前，{what}")


def hooks_left_before(before: dict) -> list[CheckResult]:
    """A failed result for each kind of global module hook already registered when the
    check started (left by a cell of the notebook): compared in every view alike."""
    return [
        CheckResult(
            _BEFORE_THE_CALL.format(what=setting.text),
            False,
            _NO_HOOK_BEFORE,
            setting.shown(before[setting.name]),
        )
        for setting in _HOOKS_BEFORE
        if before.get(setting.name)
    ]


@dataclasses.dataclass(frozen=True)
class Check:
    """One check of one exercise with its parameters; subclasses are dataclasses too."""

    number: ClassVar[int] = 0  # the exercise's number in its lesson's EXERCISES

    @property
    def heading(self) -> Text:
        lesson = sys.modules[type(self).__module__]
        return lesson.EXERCISES[self.number - 1].heading

    def key(self) -> str:
        """Which check with which parameters: observations are matched to checks by it."""
        params = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self))
        return f"{type(self).__name__}({params})"

    def observe(self, fn: Callable[..., Any]) -> dict:
        raise NotImplementedError

    def judge(self, obs: dict) -> None:
        """Raise CheckFailed (or NotAttempted) unless the observation shows a right answer."""
        raise NotImplementedError

    def observe_plain(self, fn: Callable[..., Any]) -> dict:
        """Observe, never raising; record the global settings, then put them back."""
        saved = capture_global_state()
        try:
            observation = self.observe(fn)
        except Exception as error:  # a check that could not observe fails, it does not crash
            observation = {"observe_error": f"{trusted.type_(error).__name__}: {error}"[:300]}
        after = global_state()
        restore_global_state(saved)
        return {**observation, "_state": {"before": saved.values, "after": after}}

    def decide(self, obs: dict) -> None:
        """Judge, with a clear failure when nothing could be observed.

        Fails closed: an observation whose recorded facts disagree with its values
        (see ``observation.check_observation``) earns nothing, whatever it shows.
        """
        problem = obs.get("observe_error") if type(obs) is dict else "not plain data"
        if problem:
            what = Text("running your function", "运行你的函数")
            found = Text("it could not be observed ({p})", "无法观察它的行为（{p}）").format(
                p=problem
            )
            raise CheckFailed(self.heading, [CheckResult(what, False, NO_EXCEPTION, found)])
        try:
            check_observation(obs)
            before, after = _recorded_state(obs)
            left = hooks_left_before(before)
            if left:
                raise CheckFailed(self.heading, left)
            self.judge(obs)
        except InconsistentObservation as refused:
            what = Text("recording your function", "记录函数的行为")
            found = NOT_CONSISTENT.format(p=str(refused).removeprefix(_REFUSED_PREFIX))
            raise CheckFailed(self.heading, [CheckResult(what, False, CONSISTENT, found)]) from None
        changed = state_changes(before, after)
        if changed:
            raise CheckFailed(self.heading, changed)


def note(text: Text) -> None:
    """Say, beside a pass, what could not be checked here (e.g. "skipped: no GPU")."""
    if text not in MODE.notes:
        MODE.notes.append(text)


SEEDS = 2**31 - 1  # torch.manual_seed and the oracle's draws take any seed below this


def salted(check: Check) -> Check:
    """The check with its seed moved by ``MODE.salt``: while grading, the hidden tests'
    seeds come from the submission (learner and lesson), so the inputs they draw differ
    from one learner to the next and nothing written in a notebook fixes them. Observer
    and judge move it alike, so the recorded keys still match."""
    if not MODE.salt or "seed" not in {f.name for f in dataclasses.fields(check)}:
        return check
    return dataclasses.replace(check, seed=(check.seed + MODE.salt) % SEEDS)


def refused_when_graded(check: Check, fn: Callable[..., Any]) -> None:
    """Self-study: fail the check, naming each line, when grading would refuse the code the
    learner's function comes from (the learner-code policy, ``autograder/kernel/graded_code``).
    Only in an IPython kernel; grading reads the cells itself."""
    lesson = sys.modules.get(type(check).__module__)
    exercises = getattr(lesson, "EXERCISES", ())
    if not 0 < check.number <= len(exercises):
        return
    from autograder.kernel import graded_code  # the learner's kernel: the policy reads cells

    number = type(check).__module__.rpartition("lesson")[2]
    failures = graded_code.refused(exercises[check.number - 1].function, fn, number, get_language())
    if failures:
        raise CheckFailed(check.heading, failures)


def checker(spec: type[Check]) -> Callable[..., None]:
    """The function a test cell calls, ``check_x(fn, seed=1, lr=0.05, device=None)``: each
    keyword a field of ``spec``, a dtype given as ``torch.float32`` kept by its name, a whole
    number given for a float field made a float, the device kept by its name."""
    defaults = {f.name: f.default for f in dataclasses.fields(spec)}

    def check(fn: Callable[..., Any], **settings: Any) -> None:
        for name, value in settings.items():
            if name not in defaults:
                raise TypeError(f"{name!r} is not a setting of {spec.__name__}")
            if name == "device":
                settings[name] = device_name(value)
            elif trusted.isinstance_(value, torch.dtype):
                settings[name] = str(value).removeprefix("torch.")
            elif trusted.type_(defaults[name]) is float:
                settings[name] = float(value)
        verdict(spec(**settings), fn)

    check.__doc__, check.__qualname__ = spec.__doc__, f"checker({spec.__name__})"
    return check


def verdict(check: Check, fn: Callable[..., Any]) -> None:
    """Run one check in the current mode; in self-study, print the outcome or raise."""
    check = salted(check)
    if MODE.name == "collect":  # the build lists the checks a test cell makes
        MODE.recorded.append((check.key(), check))
        return
    if MODE.name == "observe":
        MODE.recorded.append((check.key(), check.observe_plain(fn)))
        return
    if MODE.name == "judge":
        observation = MODE.next_observation(check.key())
    else:
        if MODE.name == "self-study":
            refused_when_graded(check, fn)
        observation = from_bytes(to_bytes(check.observe_plain(fn)))
    if MODE.name == "self-study":
        MODE.notes = []
    check.decide(observation)
    if MODE.name == "self-study" and not MODE.quiet:
        print(PASSED.format(ex=check.heading())())
        for text in MODE.notes:
            print(f"  {text()}")
