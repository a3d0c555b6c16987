"""The Python the classroom's users run: this environment's, or a bridge to it.

JupyterHub starts every server as its own user, so the interpreter must be one they may
run. A Python installed in a private folder (pyenv under /root, a home) is not; then a
system Python of the same version can stand in: a virtual environment of it whose one
``.pth`` line adds this environment's packages. Its exact version must be one that
every installed package allows (their ``Requires-Python``): Debian's 3.11.2 is a "3.11",
but a package may need 3.11.5.
"""

from __future__ import annotations

import pwd
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

# The version the course's packages were installed for, e.g. "3.11".
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"


class InterpreterError(RuntimeError):
    """No Python the classroom's users can run with the course's packages."""


def runs_as(python: Path, account: pwd.struct_passwd) -> bool:
    """Whether ``account`` can start ``python`` and import the course's packages with it."""
    try:
        result = subprocess.run(
            [str(python), "-c", "import jupyterhub.singleuser, nbgrader, torch"],
            user=account.pw_uid,
            group=account.pw_gid,
            extra_groups=[],
            cwd="/",
            capture_output=True,
            timeout=120,
            check=False,
        )
    except PermissionError:
        return False
    return result.returncode == 0


def full_version(python: Path) -> str:
    """``python``'s version, e.g. "3.11.2"."""
    return subprocess.run(
        [str(python), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def unmet_requirements(version: str) -> list[str]:
    """The installed packages whose ``Requires-Python`` excludes Python ``version``, each as
    "name (needs Python SPEC)"."""
    unmet = set()
    for distribution in metadata.distributions():
        needs = distribution.metadata.get("Requires-Python")
        try:
            if needs and not SpecifierSet(needs).contains(version, prereleases=True):
                unmet.add(f"{distribution.metadata['Name']} (needs Python {needs.strip()})")
        except InvalidSpecifier:  # pip installed it all the same; nothing to check against
            continue
    return sorted(unmet)


def check_version(python: Path) -> None:
    """Refuse ``python`` unless it is the course's minor version and every installed package
    allows its exact version; the error names the packages."""
    try:
        version = full_version(python)
    except (OSError, subprocess.CalledProcessError) as error:
        raise InterpreterError(f"{python} does not run as a Python: {error}") from error
    if version.rsplit(".", 1)[0] != VERSION:
        raise InterpreterError(f"{python} is Python {version}; the course runs on {VERSION}")
    unmet = unmet_requirements(version)
    if unmet:
        raise InterpreterError(
            f"{python} is Python {version}, which installed packages do not allow: "
            f"{', '.join(unmet)}. Give a Python {VERSION} they allow with --python"
        )


def bridge(base: Path, target: Path) -> Path:
    """A venv of ``base`` in ``target`` that sees this environment's packages; its python."""
    check_version(base)
    subprocess.run([str(base), "-m", "venv", "--clear", "--without-pip", str(target)], check=True)
    purelib = sysconfig.get_paths()["purelib"]
    site_packages = target / "lib" / f"python{VERSION}" / "site-packages"
    line = f"import site; site.addsitedir({purelib!r})\n"
    (site_packages / "course-environment.pth").write_text(line, encoding="utf-8")
    python = target / "bin" / "python"
    _write_commands(python)
    return python


_COMMAND = """\
#!{python}
# {name}, run with the classroom's Python; written by course-classroom setup.
import sys
from {module} import {first}
sys.exit({attr}())
"""


def _write_commands(python: Path) -> None:
    """The environment's commands (nbgrader, course-grade, jupyter, ...) beside ``python``,
    started by it: theirs in the environment start an interpreter users may not run."""
    for entry in metadata.entry_points(group="console_scripts"):
        script = python.parent / entry.name
        if "/" in entry.name or entry.name.startswith(".") or script.exists() or not entry.attr:
            continue
        text = _COMMAND.format(
            python=python,
            name=entry.name,
            module=entry.module,
            first=entry.attr.split(".")[0],
            attr=entry.attr,
        )
        script.write_text(text, encoding="utf-8")
        script.chmod(0o755)


def for_users(folder: Path, account: pwd.struct_passwd, base: Path | None) -> Path:
    """The python ``account`` (and every classroom user) will run; bridged from ``base`` if given.

    Raises InterpreterError, naming the remedy, when neither this Python nor the bridge runs.
    """
    own = Path(sys.executable)
    if base is None:
        if runs_as(own, account):
            return own
        raise InterpreterError(
            f"the classroom's users cannot run this Python ({own}, which resolves to "
            f"{own.resolve()}): it lies in a folder only its owner may enter. Give a Python "
            f"{VERSION} they can run with --python (e.g. --python /usr/bin/python{VERSION}, "
            f"if it is new enough for the installed packages)"
        )
    python = bridge(base, folder / "python")
    if not runs_as(python, account):
        raise InterpreterError(
            f"the classroom's users cannot run {python} either: may they enter {folder}?"
        )
    return python
