"""What happened to one submission, as plain data saved next to the gradebook.

nbgrader's gradebook holds scores; it cannot say that a zero came from a crash,
a timeout, a corrupt file or a missing notebook. These records can, and the
export and the report read them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATUSES = (
    "graded",
    "missing",
    "timed out",
    "crashed",
    "corrupt file",
    "error",
    "flagged",
    "rejected",
)


@dataclass
class GradeRecord:
    """The outcome of grading one learner's notebook."""

    student: str
    assignment: str
    notebook: str
    status: str
    reason: str = ""  # in English; the Chinese beside it (reasons.py)
    reason_zh: str = ""
    incidents: list[dict] = field(default_factory=list)
    flags: list[dict] = field(default_factory=list)  # integrity.Flag.as_dict()
    sandbox: str = ""
    seconds: float = 0.0
    verdicts: dict = field(default_factory=dict)  # grade_id -> the judge's verdict
    stages: dict = field(default_factory=dict)  # stage -> wall seconds (grader/pipeline/stages.py)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"Unknown status {self.status!r}; expected one of {STATUSES}")


def records_dir(course_root: Path, assignment: str) -> Path:
    """Where the records of one assignment live inside the course."""
    return course_root / "grading" / "records" / assignment


def save(course_root: Path, record: GradeRecord) -> Path:
    """Write one record as JSON, replacing an older one for the same submission."""
    folder = records_dir(course_root, record.assignment)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record.student}--{record.notebook}.json"
    path.write_text(json.dumps(asdict(record), ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def load(course_root: Path, assignment: str) -> list[GradeRecord]:
    """All records of one assignment, sorted by student and notebook."""
    folder = records_dir(course_root, assignment)
    if not folder.is_dir():
        return []
    records = [
        GradeRecord(**json.loads(p.read_text(encoding="utf-8"))) for p in folder.glob("*.json")
    ]
    return sorted(records, key=lambda r: (r.student, r.notebook))
