"""The classroom's Unix accounts: one per person, so that file permissions keep work apart.

Every single-user server runs as its own user (JupyterHub's LocalProcessSpawner), with a
home only that user can enter; learners therefore cannot read each other's notebooks or
the instructor's course folders.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
from pathlib import Path

# What useradd accepts everywhere, and what JupyterHub keeps unchanged as a user name.
_NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")


class AccountError(RuntimeError):
    """An account could not be made or used."""


def valid_name(name: str) -> bool:
    """A portable Unix user name: lower-case letters, digits, '-' and '_'."""
    return bool(_NAME.fullmatch(name))


def exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def remove(name: str) -> None:
    """Remove an account setup made a moment ago, with its home and group."""
    subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)


def ensure_user(name: str, homes: Path) -> pwd.struct_passwd:
    """The account ``name``; made (with a private home under ``homes``) when it does not exist.

    An existing account, e.g. a real user of the machine, is used as it is.
    """
    if not valid_name(name):
        raise AccountError(f"not a portable user name: {name!r}")
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    if os.geteuid() != 0:
        raise AccountError(f"user {name!r} does not exist, and only root can create it")
    home = homes / name
    subprocess.run(
        ["useradd", "--create-home", "--home-dir", str(home), "--shell", "/bin/bash"]
        + ["--user-group", name],
        check=True,
        capture_output=True,
    )
    os.chmod(home, 0o700)
    return pwd.getpwnam(name)


def give(path: Path, account: pwd.struct_passwd) -> None:
    """Make ``account`` own ``path`` and everything under it (links themselves, not targets)."""
    os.chown(path, account.pw_uid, account.pw_gid, follow_symlinks=False)
    for folder, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(Path(folder) / name, account.pw_uid, account.pw_gid, follow_symlinks=False)
