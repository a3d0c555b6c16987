"""Read a lesson's graded cells from its source notebook and run them in-process.

The tests take the reference solutions and the test cells from the notebook
itself, so they check what learners and graders actually get.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from autograder import bilingual

# Calls that draw a figure: a lesson cell that makes one must show it as an image.
FIGURE_CALLS = ("graph.draw(", "plt.subplots(", "plt.figure(")


def graded_cells(source: Path) -> dict[str, nbformat.NotebookNode]:
    """Map nbgrader grade_id to cell for every graded or solution cell."""
    nb = bilingual.read(source)
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell
        for cell in nb.cells
        if bilingual.is_graded(cell)
    }


def run(code: str, namespace: dict | None = None) -> dict:
    """Execute notebook code in a namespace that has ``torch`` imported, like the lesson's."""
    import torch

    namespace = {"torch": torch} if namespace is None else namespace
    exec(compile(code, "<cell>", "exec"), namespace)  # noqa: S102 - the code is the course's own
    return namespace
