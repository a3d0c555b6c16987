"""Each submission's salt for the hidden tests, from a secret kept in the course.

The hidden tests' seeds are written in the instructor's notebooks, and the course's
solutions are public; so while grading they are moved by a salt that only the
grader can compute: an HMAC, under the course's own random key, of the lesson and
the learner. Two learners draw different hidden inputs, the same learner draws the
same ones when graded again, and nothing a learner can read fixes them.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

KEY = Path("grading") / "hidden-inputs.key"  # readable by the instructor (and grader) only


def salt(course_root: Path, student: str, assignment: str) -> int:
    """The submission's salt: never 0 (0 means "not salted")."""
    message = f"{assignment}\0{student}".encode()
    digest = hmac.new(course_key(course_root), message, hashlib.sha256).digest()
    return 1 + int.from_bytes(digest[:4], "little") % (2**30)


def course_key(course_root: Path) -> bytes:
    """The course's key, made on first use; made whole or not at all, so that parallel
    workers never read half of one."""
    path = Path(course_root) / KEY
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(secrets.token_bytes(32))
    try:
        os.link(draft, path)  # fails where another worker was first: theirs stands
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return path.read_bytes()
