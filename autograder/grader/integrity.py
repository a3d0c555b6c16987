"""Structural integrity of a submission, checked by reading it before its code runs.

Graded test cells that were deleted, edited or stripped of their nbgrader
metadata are flagged (nbgrader restores their code from the source anyway).
What learner code may not do is the learner-code policy (policy.py), applied
by the judge step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Flag:
    """One integrity problem: what, where, and which graded cells lose their credit."""

    kind: str
    cell: str
    detail: str
    voids: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.kind} in {self.cell}: {self.detail}"

    def as_dict(self) -> dict:
        return asdict(self)


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def is_test_cell(cell) -> bool:
    """A graded test cell nbgrader knows: a cell whose grade_id nbgrader dropped is not one."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    graded = bool(meta.get("grade")) and not meta.get("solution") and cell.cell_type == "code"
    return graded and bool(meta.get("grade_id"))


def normal_source(source: str) -> str:
    """Source without leading/trailing blank lines or trailing spaces, for comparisons."""
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def visible_source(source: str) -> str:
    """A test cell's code as learners see it: without its hidden-tests block, normalised."""
    return normal_source(source.split("### BEGIN HIDDEN TESTS")[0])


def structural_flags(source_nb, submitted_nb) -> list[Flag]:
    """Test cells of the source that are missing, edited or stripped in the submission."""
    submitted = {_grade_id(c): c for c in submitted_nb.cells if _grade_id(c)}
    bare_sources = {normal_source(c.source) for c in submitted_nb.cells if not _grade_id(c)}
    flags = []
    for cell in source_nb.cells:
        if not is_test_cell(cell):
            continue
        gid = _grade_id(cell)
        mine = submitted.get(gid)
        visible = visible_source(cell.source)
        if mine is None:
            stripped = any(visible and visible in bare for bare in bare_sources)
            kind = "metadata-stripped test cell" if stripped else "deleted test cell"
            flags.append(Flag(kind, gid, "the graded test cell is not intact", (gid,)))
            continue
        if normal_source(mine.source) != visible:
            flags.append(
                Flag("edited test cell", gid, "its code differs from the original", (gid,))
            )
    return flags
