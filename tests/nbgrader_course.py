"""Make submissions from the learner notebooks and grade them with the real nbgrader CLI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat
from processes import BIN, venv_env

from autograder import bilingual, course


def submission(learner: Path, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The learner notebook with the given solution cells (by grade_id) filled in."""
    nb = bilingual.read(learner)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers:
            cell.source = answers[grade_id].strip("\n")
    return nb


def exercises_only(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook without its demonstration code cells (a learner may delete them too):
    its first code cell (the setup) and the nbgrader cells stay, with every markdown cell.

    Grading runs a kernel through every code cell; the demonstrations cost a lesson 01 or
    03 kernel about 0.35 CPU seconds of its 0.5, and no verdict or attack depends on them.
    """
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    nb.cells = [
        cell
        for cell in nb.cells
        if cell.cell_type != "code" or cell is code[0] or "nbgrader" in cell.metadata
    ]
    return nb


def submit(root: Path, student: str, assignment: str, nb: nbformat.NotebookNode) -> Path:
    """Place a submission where nbgrader autograde looks for it."""
    path = root / "submitted" / student / assignment / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def autograde(root: Path, assignment: str) -> subprocess.CompletedProcess:
    """Run ``nbgrader autograde`` in the course folder, as an instructor would."""
    return subprocess.run(
        [str(BIN / "nbgrader"), "autograde", assignment],
        cwd=root,
        env=venv_env(),
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


def scores(root: Path, assignment: str, student: str) -> dict[str, tuple[float, float]]:
    """Map grade_id to (score, max score) for one student's notebook, from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(course.gradebook_url(root)) as gradebook:
        notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        return {grade.name: (grade.score, grade.max_score) for grade in notebook.grades}


def points(root: Path, assignment: str, student: str) -> dict[str, float]:
    """Map grade_id to the points one student's notebook earned, for its code cells."""
    from nbgrader.api import Gradebook

    with Gradebook(course.gradebook_url(root)) as gradebook:
        notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        return {g.name: g.score for g in notebook.grades if g.cell_type == "code"}


def class_points(root: Path, assignment: str) -> dict[str, dict[str, float]]:
    """``points`` of every student who handed the assignment in, read in one gradebook
    session (opening the gradebook costs more than reading one student's grades)."""
    from nbgrader.api import Gradebook

    with Gradebook(course.gradebook_url(root)) as gradebook:
        return {
            submission.student_id: {
                g.name: g.score
                for g in gradebook.find_submission_notebook(
                    assignment, assignment, submission.student_id
                ).grades
                if g.cell_type == "code"
            }
            for submission in gradebook.assignment_submissions(assignment)
        }


def autograded_path(root: Path, assignment: str, student: str) -> Path:
    """Where nbgrader's autograde writes a student's graded notebook."""
    return root / "autograded" / student / assignment / f"{assignment}.ipynb"


def autograded_outputs(root: Path, assignment: str, student: str) -> dict[str, str]:
    """Map grade_id to the text of the cell's outputs in the autograded notebook."""
    texts = {}
    for cell in bilingual.read(autograded_path(root, assignment, student)).cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id")
        parts = []
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts.append(output.get("evalue", ""))
            parts.extend(str(v) for v in output.get("data", {}).values())
            parts.extend(output.get("traceback", []))
        texts[grade_id] = "\n".join(parts)
    return texts
