"""The reference's states, computed ahead of time and shipped as data.

Processes that run learner code (the learner's kernel, the grading sandbox, a classroom
learner's server) hold no reference: a visible check compares what the learner's
function did with the state the reference left in the same case, read from
``autograder/lessons/expected/lessonNN.wire``. ``make build`` writes those files from the
judge's references (``autograder.references.expected``); a test fails when they are
stale. They are in ``wire.py``'s format: plain data, read without looking up any class.

The judge, which holds the references, reads a visible case's state from there too rather
than computing it again in every grading worker, but only while ``sources.sha256`` says
the files were written from the code installed now (``shipped``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from autograder.common import trusted, wire
from autograder.common.i18n import Text
from autograder.common.result import CheckFailed, CheckResult

PACKAGE = Path(__file__).resolve().parent.parent
FOLDER = PACKAGE / "lessons" / "expected"
DIGEST = FOLDER / "sources.sha256"
TORCH_VERSION = FOLDER / "torch.version"  # the torch the states were computed with
# The code a reference's state follows from: the checks, the references and what they use.
SOURCES = ("common", "kernel", "lessons", "references")
NOT_SHIPPED = Text(
    "this check has no expected result shipped with the course ({key}): restore the test "
    "cell as it was released, or ask your instructor",
    "课程没有附带这个检查的预期结果（{key}）：请把测试单元格恢复成发布时的样子，或询问老师",
)


def lesson_of(spec: Any) -> str:
    """'lesson01' for a check defined in autograder.lessons.lesson01."""
    return type(spec).__module__.rpartition(".")[2]


def on_cpu(spec: Any) -> Any:
    """The check without its device: references always run on the CPU."""
    fields = {f.name for f in dataclasses.fields(spec)}
    return dataclasses.replace(spec, device=None) if "device" in fields else spec


def key(spec: Any) -> str:
    """Which check, whatever device it observes on: the key of its shipped states."""
    return on_cpu(spec).key()


def case_key(case: dict, again: bool = False) -> str:
    """One case of a check, by the parameters its seed drew (``again``: its second call)."""
    return trusted.repr_(sorted(case.items())) + (" again" if again else "")


def path(lesson: str) -> Path:
    return FOLDER / f"{lesson}.wire"


@functools.cache
def load(lesson: str) -> dict:
    """{check key: {case key: the reference's state}} for one lesson; empty if none shipped."""
    file = path(lesson)
    if not file.is_file():
        return {}
    return wire.loads(file.read_bytes())


def lookup(spec: Any, case: dict, again: bool = False) -> dict:
    """The reference's state in ``case``, as shipped; a clear failure when there is none."""
    states = load(lesson_of(spec)).get(key(spec), {})
    found = states.get(case_key(case, again))
    if found is None:
        what = Text("finding the expected result", "查找预期结果")
        text = NOT_SHIPPED.format(key=key(spec))
        raise CheckFailed(spec.heading, [CheckResult(what, False, "", text)])
    return found


def forget() -> None:
    """Read the files again on next use (after ``make build`` wrote new ones)."""
    load.cache_clear()
    current.cache_clear()


def sources_digest() -> str:
    """A digest of the code the shipped states were computed with, and of torch's version."""
    import torch

    digest = hashlib.sha256(torch.__version__.encode())
    for folder in SOURCES:
        for source in sorted((PACKAGE / folder).glob("*.py")):
            digest.update(f"{folder}/{source.name}\0".encode())
            digest.update(source.read_bytes())
    return digest.hexdigest()


def other_torch() -> str | None:
    """The torch version the shipped states were computed with, where this process runs
    another one (random inputs in bfloat16, for one, differ between versions)."""
    import torch

    try:
        shipped = TORCH_VERSION.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return shipped if shipped != torch.__version__ else None


@functools.cache
def current() -> bool:
    """Whether sources.sha256 names the code installed now."""
    try:
        return DIGEST.read_text(encoding="utf-8").strip() == sources_digest()
    except OSError:
        return False


_afresh = False


@contextlib.contextmanager
def afresh() -> Iterator[None]:
    """Compute every state, shipped or not: what ``make build`` writes and checks."""
    global _afresh
    _afresh = True
    try:
        yield
    finally:
        _afresh = False


def shipped(lesson: str, check: str, case: str) -> dict | None:
    """The judge's shortcut: the shipped state of one case (by its keys, ``key`` and
    ``case_key``), or None where it must compute it (a case not shipped, e.g. a hidden
    test's salted one; files older than the code; ``afresh``)."""
    if _afresh or not current():
        return None
    return load(lesson).get(check, {}).get(case)
