"""Starter code instead of nbgrader's stub: the capstone's learners repair code, not write it.

A solution cell may carry, in its metadata, the whole cell a learner starts from
(``metadata.course.starter``: one string, or one per language when its comments
differ). generate_assignment then clears the solution as usual and puts that code in
the cell instead of nbgrader's configured stub, so the release, the gradebook's copy
of the cell and its checksum all hold the starter, and autograde treats it like any
unanswered cell (solution cells are never overwritten by autograde).
"""

from __future__ import annotations

from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import ClearSolutions

STARTER = "starter"


def starter_source(cell, language: str) -> str | None:
    """The starter code of a solution cell in one language, or None for nbgrader's stub."""
    starter = cell.get("metadata", {}).get("course", {}).get(STARTER)
    if starter is None or isinstance(starter, str):
        return starter
    return starter[language]


class ClearSolutionsToStarter(ClearSolutions):
    """nbgrader's ClearSolutions, with a cell's own starter code as its stub."""

    def preprocess(self, nb, resources):
        resources["course_language"] = nb.metadata.get("course", {}).get("language", "en")
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        starter = starter_source(cell, resources["course_language"])
        course = cell.metadata.get("course", {})
        course.pop(STARTER, None)
        if not course:
            cell.metadata.pop("course", None)
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if starter is not None:
            cell.source = starter  # the whole cell: the learner starts from the starter code
        return cell, resources


def generate_preprocessors() -> list:
    """generate_assignment's preprocessors, ClearSolutions replaced by the starter-aware one."""
    default = GenerateAssignment.class_traits()["preprocessors"].default()
    return [ClearSolutionsToStarter if p is ClearSolutions else p for p in default]
