"""No check lets the allocator decide a verdict: every world of one observation stays alive.

An answer that remembers its results by ``id(fn)`` once had CF-3 named in one pytest-xdist
worker and nothing in another (CI, stop 57): a freed world had lent its ``fn``'s id to a
later case's ``fn`` or not, as what the process had run before placed objects. Each check
now keeps its worlds until its last call (``oracle._worlds_kept_alive``): no two calls of
one observation see one id for two objects, and an answer that remembers by id is met by
the sequences in one world, everywhere alike.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from conftest import SOLUTIONS

from autograder import course
from autograder.common import domain
from autograder.kernel.device import course_device

LESSONS = [int(source.parent.name[:2]) for source in course.lesson_sources(SOLUTIONS)]


def _spy():
    """A learner function that notes, at each call, whether every argument of the calls
    before is still alive (weak references: the spy itself keeps nothing alive)."""
    seen: list[weakref.ref] = []
    alive: list[bool] = []

    def spy(*args):
        alive.append(all(ref() is not None for ref in seen))
        for value in args:
            try:
                seen.append(weakref.ref(value))
            except TypeError:  # ints, tuples, lists: not what an answer remembers by id
                pass

    return spy, seen, alive


def _spec(spec_type: type):
    """The check as a learner's check cell makes it, on the course's device."""
    if "device" in spec_type.__dataclass_fields__:
        return spec_type(device=str(course_device()))
    return spec_type()


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_argument_of_a_check_outlives_its_last_call(lesson):
    for number, spec_type in domain.specs(lesson).items():
        spy, seen, alive = _spy()
        _spec(spec_type).observe(spy)
        assert all(alive), f"lesson {lesson:02d}, exercise {number}: an earlier world was freed"


def test_the_worlds_are_freed_when_the_observation_ends():
    """Kept for one check, not for the life of the learner's kernel."""
    spy, seen, alive = _spy()
    _spec(domain.specs(7)[3]).observe(spy)  # backward_is_correct(fn, x): a fn per world
    assert len(seen) > 2 and all(alive)
    gc.collect()
    assert all(ref() is None for ref in seen)
