"""The class list as a CSV file, the form learning platforms export (``setup --roster``).

One row per learner: a log-in name, names, e-mail, course language, the platform's user id.
Column titles are matched without regard to case, spaces or underscores, and a few
spellings of each are known (Canvas: ``SIS Login ID``, ``Student`` as "Last, First";
Moodle: ``Username``, ``First name``, ``Surname``, ``Email address``). Setup makes an
account for each learner and registers them, with their names, in their course's nbgrader
gradebook, so the formgrader, the CSV and the Canvas / Moodle files carry them.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from autograder.classroom import accounts

# Known column titles, normalised (lower case, no spaces, "-" or "_"), first match wins.
COLUMNS = {
    "user": ("username", "user", "login", "sisloginid", "loginid", "id"),
    "first_name": ("firstname", "givenname", "first"),
    "last_name": ("lastname", "surname", "familyname", "last"),
    "email": ("email", "emailaddress", "mail"),
    "lang": ("language", "lang", "courselanguage"),
    "lms_user_id": ("lmsuserid", "canvasuserid", "canvasid", "idnumber"),
    "student": ("student", "name", "fullname"),  # Canvas's "Last, First"
}
LANGUAGES = {
    "en": "en",
    "english": "en",
    "英文": "en",
    "英语": "en",
    "zh": "zh",
    "zh-cn": "zh",
    "zh_cn": "zh",
    "chinese": "zh",
    "中文": "zh",
    "汉语": "zh",
}


class RosterError(ValueError):
    """The class list cannot be read as it is; the message names the row and what to fix."""


@dataclass(frozen=True)
class Learner:
    """One row of the class list."""

    user: str
    lang: str  # "en" or "zh"
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    lms_user_id: str = ""


def _key(title: str) -> str:
    return "".join(ch for ch in title.strip().lower() if ch not in " _-")


def _columns(titles: list[str]) -> dict[str, str]:
    """field -> the file's column title for it."""
    found = {_key(title): title for title in titles if title}
    chosen = {}
    for field, names in COLUMNS.items():
        for name in names:
            if name in found:
                chosen[field] = found[name]
                break
    if "lms_user_id" not in chosen and found.get("id") not in (None, chosen.get("user")):
        chosen["lms_user_id"] = found["id"]  # Canvas: "ID" beside "SIS Login ID"
    return chosen


def read(path: Path, default_lang: str = "en") -> list[Learner]:
    """The learners of the class list at ``path`` (UTF-8, with or without a byte-order mark;
    comma, semicolon or tab separated)."""
    text = path.read_text(encoding="utf-8-sig")
    try:
        dialect = csv.Sniffer().sniff(text.split("\n", 1)[0], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = csv.DictReader(text.splitlines(), dialect=dialect)
    columns = _columns(list(rows.fieldnames or []))
    if "user" not in columns:
        raise RosterError(
            f"{path}: no column of log-in names; name one 'username' (or 'login', "
            f"'SIS Login ID', 'id'). Found: {', '.join(rows.fieldnames or [])}"
        )
    learners: dict[str, Learner] = {}
    for number, row in enumerate(rows, start=2):

        def cell(field: str, row=row) -> str:
            return (row.get(columns.get(field, "")) or "").strip()

        user = cell("user")
        if not user or "points possible" in cell("student").lower():
            continue  # an empty row, or Canvas's "Points Possible" row
        if not accounts.valid_name(user):
            raise RosterError(
                f"{path}, row {number}: {user!r} is not a portable Unix user name (lower-case "
                "letters, digits, '-', '_'); use a column of such log-in names"
            )
        lang = LANGUAGES.get(cell("lang").lower()) if cell("lang") else default_lang
        if lang is None:
            raise RosterError(
                f"{path}, row {number}: language {cell('lang')!r} is neither 'en' nor 'zh'"
            )
        first, last = cell("first_name"), cell("last_name")
        if not (first or last) and "," in cell("student"):
            last, first = (part.strip() for part in cell("student").split(",", 1))
        if user in learners:
            raise RosterError(f"{path}, row {number}: {user!r} is listed twice")
        learners[user] = Learner(user, lang, first, last, cell("email"), cell("lms_user_id"))
    return list(learners.values())
