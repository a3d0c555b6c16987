"""Structural integrity of a submission, checked by reading it before its code runs.

Graded test cells that were deleted, edited or stripped of their nbgrader
metadata are flagged (nbgrader restores their code from the source anyway).
What learner code may not do is the learner-code policy (policy.py), applied
by the judge step.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from autograder.common.i18n import Text
from autograder.grader import reasons

# The kinds of flag; a record saves the English as the flag's kind, the Chinese beside it.
DELETED = Text("deleted test cell", "测试单元格被删除")
STRIPPED = Text("metadata-stripped test cell", "测试单元格的 nbgrader 元数据被删除")
EDITED = Text("edited test cell", "测试单元格被修改")
FORBIDDEN = Text("forbidden construct", "不允许的写法")
DISAGREES = Text("first run disagrees", "首次运行与评分结果不一致")
NOT_INTACT = Text("the graded test cell is not intact", "这个评分测试单元格已不完整")
DIFFERS = Text("its code differs from the original", "它的代码与原来的不同")


@dataclass(frozen=True)
class Flag:
    """One integrity problem: what, where, and which graded cells lose their credit."""

    kind: Text
    cell: str
    detail: Text
    voids: tuple[str, ...]

    def describe(self) -> Text:
        return reasons.says(
            "{kind} in {cell}: {detail}",
            "{kind}（{cell}）：{detail}",
            kind=self.kind,
            cell=reasons.cell_name(self.cell),
            detail=self.detail,
        )

    def as_dict(self) -> dict:
        """As a record saves it: kind and detail in English, each with its Chinese beside it."""
        return {
            **reasons.fields("kind", self.kind),
            "cell": self.cell,
            **reasons.fields("detail", self.detail),
            "voids": list(self.voids),
        }

    @classmethod
    def from_dict(cls, saved: dict) -> Flag:
        """A flag that ``as_dict`` wrote (the judge step's, read back in the worker)."""
        kind, detail = reasons.saved(saved, "kind"), reasons.saved(saved, "detail")
        if kind is None or detail is None:
            raise ValueError(f"not a flag as_dict wrote: {saved!r}")
        return cls(kind, str(saved["cell"]), detail, tuple(saved["voids"]))


def voided_cells(flags: list[Flag]) -> dict[str, dict[str, str]]:
    """The test cells ``flags`` void, each with why as {"en": …, "zh": …}: plain data for the
    judge step's configuration (verdicts.JudgeTestCells.voided)."""
    return {gid: asdict(flag.describe()) for flag in flags for gid in flag.voids}


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
            flags.append(Flag(STRIPPED if stripped else DELETED, gid, NOT_INTACT, (gid,)))
            continue
        if normal_source(mine.source) != visible:
            flags.append(Flag(EDITED, gid, DIFFERS, (gid,)))
    return flags
