"""Feedback for learners: nbgrader's generate_feedback, without the hidden tests.

nbgrader's feedback HTML shows test cells as graded, hidden tests and all, and
tracebacks that quote them. Two steps are added to its pipeline: nbgrader's own
``ClearHiddenTests`` and :class:`ShowOnlyCheckMessages`, which keeps only the
checks' messages (expected vs found, misconception ID, section) of each error.
"""

from __future__ import annotations

from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor


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
    written = []
    for learner in [student] if student else submission.students(course_root, assignment):
        outcome = nbgrader.generate_feedback(assignment, learner, force=True)
        if outcome["success"]:
            written.append(course_root / "feedback" / learner / assignment)
    return written
