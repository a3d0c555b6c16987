"""Look at a submission before grading it, and stage a private copy to grade from.

Grading reads only the staged copy, so neither nbgrader nor learner code can
alter what the learner submitted.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat


def expected_notebooks(course_root: Path, assignment: str) -> list[str]:
    """Names (without .ipynb) of the assignment's notebooks, from its source folder."""
    return sorted(p.stem for p in (course_root / "source" / assignment).glob("*.ipynb"))


# Letters, digits and . _ @ + - ; starting with a letter or digit: no glob characters, no
# path separators, nothing a shell, nbgrader's globbing or a spreadsheet would interpret.
LEARNER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}")


def valid_learner_id(name: str) -> bool:
    """Whether ``name`` is a learner id grading accepts (nbgrader treats ids as globs)."""
    return LEARNER_ID.fullmatch(name) is not None and ".." not in name


def _folders(course_root: Path, assignment: str) -> list[str]:
    submitted = course_root / "submitted"
    if not submitted.is_dir():
        return []
    return sorted(
        p.name for p in submitted.iterdir() if not p.is_symlink() and (p / assignment).is_dir()
    )


def students(course_root: Path, assignment: str) -> list[str]:
    """Every learner with a submission folder for the assignment and a valid id."""
    return [name for name in _folders(course_root, assignment) if valid_learner_id(name)]


def invalid_students(course_root: Path, assignment: str) -> list[str]:
    """Submission folders whose names are not valid learner ids: they are never graded."""
    return [name for name in _folders(course_root, assignment) if not valid_learner_id(name)]


def problem(path: Path) -> tuple[str, str] | None:
    """(status, reason) when the notebook cannot be graded at all, else None."""
    if not path.is_file():
        return "missing", f"{path.name} was not submitted"
    try:
        nb = nbformat.read(str(path), as_version=4)
        nbformat.validate(nb)
    except Exception as error:  # any parse or schema failure means the file is unusable
        first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        return "corrupt file", f"{path.name} is not a valid notebook: {first}"
    return None


def stage(course_root: Path, staging: Path, assignment: str, student: str) -> Path:
    """Copy the learner's submission folder to the staging area; return the copy."""
    source = course_root / "submitted" / student / assignment
    target = staging / student / assignment
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target)
    return target
