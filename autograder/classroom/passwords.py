"""Each person's own password, for the accounts setup makes: one person, one login.

The hub logs in through PAM (the machine's accounts), so a password opens exactly one
account and no secret a learner holds opens anyone else's. setup gives every account it
makes a new random password (``chpasswd``) and lists them in ``passwords.csv`` in the
classroom folder, which only root may read, for the instructor to hand out one by one.
Accounts that existed before keep their own passwords; a person in the list keeps theirs
when setup runs again.
"""

from __future__ import annotations

import csv
import io
import os
import secrets
import subprocess
from pathlib import Path

FILE = "passwords.csv"
_COLUMNS = ("user", "course", "password")


def path(classroom: Path) -> Path:
    return classroom / FILE


def handed_out(classroom: Path) -> dict[str, str]:
    """user -> password of everyone setup gave one so far."""
    try:
        text = path(classroom).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return {row["user"]: row["password"] for row in csv.DictReader(io.StringIO(text))}


def _set(name: str, password: str) -> None:
    subprocess.run(
        ["chpasswd"], input=f"{name}:{password}\n", text=True, check=True, capture_output=True
    )


def give(classroom: Path, made: dict[str, str]) -> dict[str, str]:
    """A new password for each account in ``made`` (user -> course) that has none in the list;
    the list rewritten (root only). Returns the passwords given now."""
    rows = {}
    if path(classroom).is_file():
        text = path(classroom).read_text(encoding="utf-8")
        rows = {row["user"]: row for row in csv.DictReader(io.StringIO(text))}
    given = {}
    for name, course in made.items():
        if name in rows:
            continue
        given[name] = secrets.token_urlsafe(12)
        _set(name, given[name])
        rows[name] = {"user": name, "course": course, "password": given[name]}
    out = io.StringIO()
    writer = csv.DictWriter(out, _COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows.values())
    descriptor = os.open(path(classroom), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(descriptor, "w", encoding="utf-8") as file:
        file.write(out.getvalue())
    os.chmod(path(classroom), 0o600)
    return given
