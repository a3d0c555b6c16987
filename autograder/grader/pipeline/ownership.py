"""What ``course-grade`` writes in a course belongs to the course's owner, also when root ran it.

Grading runs as root where its sandbox needs it, but the course is the instructor's: the
graded notebooks, records, feedback and reports it made there must stay theirs to read,
release and remove (nbgrader's ``release_feedback`` in their own terminal, for one).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def give_to_course_owner(course_root: Path) -> None:
    """As root: every file and folder under ``course_root`` that root owns becomes the owner's.

    Opened without following links, and a file with more than one name is left alone, so
    that nothing outside the course changes hands through a link planted in it."""
    if os.geteuid() != 0 or not course_root.is_dir():
        return
    owner = course_root.lstat()
    if owner.st_uid == 0:
        return
    for folder, folders, files in os.walk(course_root):
        for name in [*folders, *files]:
            _give(os.path.join(folder, name), owner.st_uid, owner.st_gid)


def _give(path: str, uid: int, gid: int) -> None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(path, flags)
    except OSError:  # a link, a socket, or gone: nothing of course-grade's
        return
    try:
        found = os.fstat(fd)
        plain = stat.S_ISDIR(found.st_mode) or (stat.S_ISREG(found.st_mode) and found.st_nlink == 1)
        if found.st_uid == 0 and plain:
            os.fchown(fd, uid, gid)
    finally:
        os.close(fd)
