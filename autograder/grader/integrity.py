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


def _is_test(cell) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution") and cell.cell_type == "code"


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def structural_flags(source_nb, submitted_nb) -> list[Flag]:
    """Test cells of the source that are missing, edited or stripped in the submission."""
    submitted = {_grade_id(c): c for c in submitted_nb.cells if _grade_id(c)}
    bare_sources = {_normal(c.source) for c in submitted_nb.cells if not _grade_id(c)}
    flags = []
    for cell in source_nb.cells:
        if not _is_test(cell):
            continue
        gid = _grade_id(cell)
        mine = submitted.get(gid)
        if mine is None:
            visible = _normal(cell.source.split("### BEGIN HIDDEN TESTS")[0])
            stripped = any(visible and visible in bare for bare in bare_sources)
            kind = "metadata-stripped test cell" if stripped else "deleted test cell"
            flags.append(Flag(kind, gid, "the graded test cell is not intact", (gid,)))
            continue
        visible = _normal(cell.source.split("### BEGIN HIDDEN TESTS")[0])
        if _normal(mine.source) != visible:
            flags.append(
                Flag("edited test cell", gid, "its code differs from the original", (gid,))
            )
    return flags
