"""Catalogues of learner answers that the checks must judge right, one module per lesson.

Each ``catalog.lessonNN`` module has two dicts keyed by the solution cell's grade_id:

- ``WRONG``: answers that must lose the exercise's points. ``misconception`` is the ID
  the feedback must name, or None where no misconception explains the mistake (a
  hard-coded shape, a forgotten argument): then the feedback must name no ID.
  ``devices`` narrows where the mistake shows (``("cuda",)`` for an ignored device
  argument): elsewhere the answer behaves like a right one.
- ``RIGHT``: correct answers written in other styles than the official solution; each
  must earn full marks.

Each answer replaces the whole solution cell, as a learner's submission would.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wrong:
    """A wrong answer, what it gets wrong, and the misconception ID it must be named by.

    ``devices`` lists the device types on which the answer is wrong. Most answers are
    wrong everywhere; a few are wrong for a reason only one device shows (on CUDA,
    ``.cpu()`` copies, so ``output.detach().cpu()`` is a right answer there). ``named_on``:
    (device type, ID) where that device shows another belief's symptom and the feedback
    names it instead (probing by allocating on CUDA names a GPU where none is usable).
    """

    name: str
    misconception: str | None
    code: str
    devices: tuple[str, ...] = ("cpu", "cuda")
    named_on: tuple[tuple[str, str], ...] = ()

    def misconception_on(self, device: str) -> str | None:
        """The ID the feedback names on this device type."""
        return dict(self.named_on).get(device, self.misconception)


@dataclass(frozen=True)
class Right:
    """A correct answer in another style than the official solution (on ``devices``)."""

    name: str
    code: str
    devices: tuple[str, ...] = ("cpu", "cuda")
