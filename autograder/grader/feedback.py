"""Feedback for learners: nbgrader's generate_feedback, without the hidden tests.

nbgrader's feedback HTML shows test cells as graded, hidden tests and all, and
tracebacks that quote them. Two steps are added to its pipeline: nbgrader's own
``ClearHiddenTests`` and :class:`ShowOnlyCheckMessages`, which keeps only the
checks' messages (expected vs found, misconception ID, section) of each error.
nbgrader also copies every other file of the autograded folder (the course's
source files among them) into the feedback folder; here nothing but the HTML
feedback of the expected notebooks may land there, and the two small files that
nbgrader's ``release_feedback`` needs, copied as data from the submission.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor

# What release_feedback reads beside the HTML: the submission's timestamp and the secret
# that names the released file, both written by the learner's `nbgrader submit`.
RELEASE_FILES = ("timestamp.txt", "submission_secret.txt")
RELEASE_FILE_MAX_BYTES = 1024


class ShowOnlyCheckMessages(NbGraderPreprocessor):
    """Replace error tracebacks in test cells by the error's message alone."""

    def preprocess_cell(self, cell, resources, index):
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename')}: {output.get('evalue')}"]
        return cell, resources


def generate(course_root: Path, assignment: str, student: str | None = None) -> list[Path]:
    """Write feedback HTML for the assignment; return the feedback folders written."""
    from nbgrader.converters import GenerateFeedback
    from nbgrader.preprocessors import ClearHiddenTests

    from autograder.course import api
    from autograder.grader import submission

    nbgrader = api(course_root)
    defaults = GenerateFeedback.class_traits()["preprocessors"].default()
    steps = [ClearHiddenTests, ShowOnlyCheckMessages, *defaults]
    nbgrader.config.GenerateFeedback.preprocessors = steps
    nbgrader.coursedir.ignore = ["*", ".*"]  # copy no file besides the notebooks' feedback
    pages = {f"{name}.html" for name in submission.expected_notebooks(course_root, assignment)}
    written = []
    for learner in [student] if student else submission.students(course_root, assignment):
        if submission.plain_name_problem(learner):
            continue
        outcome = nbgrader.generate_feedback(assignment, learner, force=True)
        folder = course_root / "feedback" / learner / assignment
        _keep_only(folder, pages)
        _copy_release_files(course_root / "submitted" / learner / assignment, folder)
        if outcome["success"]:
            written.append(folder)
    return written


def _keep_only(folder: Path, pages: set[str]) -> None:
    """Remove from a feedback folder everything but the expected pages as regular files."""
    if not folder.is_dir() or folder.is_symlink():
        return
    with os.scandir(folder) as entries:
        for entry in entries:
            mode = entry.stat(follow_symlinks=False).st_mode
            if entry.name in pages and stat.S_ISREG(mode):
                continue
            if stat.S_ISDIR(mode):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


def _copy_release_files(submitted: Path, folder: Path) -> None:
    """Copy the files release_feedback needs, as plain bounded data, readable by the course."""
    from autograder.grader.submission import copy_plain_file

    if not folder.is_dir() or folder.is_symlink():
        return
    for name in RELEASE_FILES:
        target = folder / name
        copy_plain_file(submitted / name, target, RELEASE_FILE_MAX_BYTES)
        if target.exists():
            os.chmod(target, 0o644)
