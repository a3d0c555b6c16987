"""The trusted answer of every check — held only by the judge.

Nothing that runs beside learner code has this package: the grading sandbox shows an
empty folder in its place (``grader/sandbox/bwrap.py``), a classroom learner's account cannot
read it (``classroom/setup.py``), and the learner's kernel compares with the states the
references left, shipped as data (``autograder/lessons/expected``, written by
:mod:`autograder.references.expected`). Importing the package registers each lesson's
references with the oracle; ``autograder.grader.pipeline.judge`` does so in the grader's process.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any

from autograder.common.oracle import register_reference


def answers(spec_type: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``reference(spec, world, case)`` as ``spec_type``'s answer."""

    def register(reference: Callable[..., Any]) -> Callable[..., Any]:
        register_reference(spec_type, reference)
        return reference

    return register


@contextlib.contextmanager
def modes_kept(model: Any) -> Iterator[None]:
    """Every module of ``model`` back in the mode it arrived in when the block ends, whether
    it returned or raised (in ``modules()`` order, each with ``train(mode)``)."""
    modes = [(m, m.training) for m in model.modules()]
    try:
        yield
    finally:
        for m, mode in modes:
            m.train(mode)


def _install() -> None:
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("lesson"):
            importlib.import_module(f"{__name__}.{module.name}")


_install()
