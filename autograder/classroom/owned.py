"""Collect only what each learner submitted themselves.

nbgrader's exchange inbound is writable by every learner, and a submission's name says
whose it is (``nbgrader submit --student=OTHER``, or a folder planted by hand); nbgrader's
own collect files it under that name and only logs "cheating attempt?". This collect
(nbgrader's ``ExchangeFactory.collect`` plugin, set in the classroom instructor's
settings) takes a submission only when its folder belongs to the account it names;
the others are refused, logged as errors, and listed in the course's
``grading/refused/<assignment>.json`` for the instructor.
"""

from __future__ import annotations

import glob
import json
import os
import pwd
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect, groupby

REFUSED = Path("grading") / "refused"


def owner_of(path: str) -> str:
    try:
        return pwd.getpwuid(os.lstat(path).st_uid).pw_name
    except KeyError:
        return f"uid {os.lstat(path).st_uid}"


class OwnedCollect(ExchangeCollect):
    """nbgrader's collect, refusing a submission whose folder another account owns."""

    def init_src(self):
        super().init_src()  # the course's checks and its due date
        student = self.coursedir.student_id or "*"
        pattern = os.path.join(self.inbound_path, f"{student}+{self.coursedir.assignment_id}+*")
        records = [self._path_to_record(path) for path in glob.glob(pattern)]
        refused = []
        for record in records:
            owner = owner_of(os.path.join(self.inbound_path, record["filename"]))
            if owner != record["username"]:
                refused.append({**record, "owner": owner, "timestamp": str(record["timestamp"])})
        self._report(refused)
        names = {item["filename"] for item in refused}
        owned = [record for record in records if record["filename"] not in names]
        self.src_records = [self._latest(found) for found in groupby(owned, _user).values()]

    def _latest(self, records: list[dict]) -> dict:
        """The newest submission; with a due date and before_duedate, the newest before it."""
        ordered = self._sort_by_timestamp(records)
        if self.duedate is not None and self.before_duedate:
            on_time = [record for record in ordered if record["timestamp"] <= self.duedate]
            return (on_time or ordered)[0]
        return ordered[0]

    def _report(self, refused: list[dict]) -> None:
        for item in refused:
            self.log.error(
                "Refused %s: it claims to be %s's submission but %s made it",
                item["filename"],
                item["username"],
                item["owner"],
            )
        folder = Path(self.coursedir.root) / REFUSED
        listed = folder / f"{self.coursedir.assignment_id}.json"
        if not refused and not listed.exists():
            return
        folder.mkdir(parents=True, exist_ok=True)
        known = json.loads(listed.read_text(encoding="utf-8")) if listed.exists() else []
        seen = {item["filename"] for item in known}
        known += [item for item in refused if item["filename"] not in seen]
        listed.write_text(json.dumps(known, indent=1) + "\n", encoding="utf-8")


def _user(record: dict) -> str:
    return record["username"]
