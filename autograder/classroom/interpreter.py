"""The Python the classroom's users run: this environment's, or a bridge to it.

JupyterHub starts every server as its own user, so the interpreter must be one they may
run. A Python installed in a private folder (pyenv under /root, a home) is not; then another
Python of the same version stands in: a virtual environment of it in the classroom folder
(``python/``) whose one ``.pth`` line adds this environment's packages. Its exact version
must be one that every installed package allows (their ``Requires-Python``): Debian's 3.11.2
is a "3.11", but a package may need 3.11.5. Setup finds one without being told: the one an
earlier setup of the classroom made, else the system's ``/usr/bin/python3.X`` where the
packages allow it, else a copy of this environment's own base Python (its interpreter,
``libpython`` and standard library, about 100 MB, not its packages) in ``python-base/``.
``--python`` names another.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from autograder.classroom import reach

# The version the course's packages were installed for, e.g. "3.11".
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"


class InterpreterError(RuntimeError):
    """No Python the classroom's users can run with the course's packages."""


def runs_as(python: Path, account: pwd.struct_passwd) -> bool:
    """Whether ``account`` can start ``python`` and import the course's packages with it."""
    try:
        result = subprocess.run(
            [str(python), "-c", "import jupyterhub.singleuser, nbgrader, torch, autograder"],
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


def _bridged_from(target: Path) -> Path | None:
    """The folder of the Python the venv in ``target`` was made from (its ``home``), if any."""
    try:
        lines = (target / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home":
            return Path(value.strip())
    return None


def _bridged_base(folder: Path) -> Path | None:
    """The Python the classroom's earlier bridge was made from, where it still is."""
    home = _bridged_from(folder / "python")
    found = sorted(home.glob("python3*")) if home is not None and home.is_dir() else []
    return found[0] if found else None


def bridge(base: Path, target: Path, binds: dict[str, str] | None = None) -> Path:
    """A venv of ``base`` in ``target`` that sees this environment's packages; its python.
    An earlier bridge from the same Python is kept as it is (servers may be running it).
    ``binds``: where the classroom shows the course's checkout and environment (reach.py)."""
    check_version(base)
    python = target / "bin" / "python"
    if not python.is_file() or _bridged_from(target) not in (base.parent, base.resolve().parent):
        command = [str(base), "-m", "venv", "--clear", "--without-pip", str(target)]
        subprocess.run(command, check=True)
    binds = binds or {}
    purelib = str(reach.seen_by_users(sysconfig.get_paths()["purelib"], binds))
    site_packages = target / "lib" / f"python{VERSION}" / "site-packages"
    line = f"import site; site.addsitedir({purelib!r})\n"
    if any(source == str(reach.REPO) for source in binds.values()):
        # The editable install names the checkout's own path, which users cannot enter.
        course = str(reach.seen_by_users(reach.REPO, binds))
        line = f"import sys; sys.path.insert(0, {course!r})\n" + line
    (site_packages / "course-environment.pth").write_text(line, encoding="utf-8")
    _write_commands(python)
    return python


_SKIPPED = shutil.ignore_patterns("site-packages", "test", "config-*", "idlelib", "tkinter")


def copy_base(target: Path) -> Path:
    """A copy in ``target`` of the Python this environment was made from: its interpreter,
    ``libpython`` and standard library, readable and runnable by everyone; its python.

    A Python built with a shared ``libpython`` (pyenv's) finds it through an absolute
    RUNPATH into its own, private, folder; the copy's is rewritten in place to
    ``$ORIGIN/../lib`` (shorter, padded with NULs), so it finds the copied library."""
    base = Path(sys.base_prefix)
    name = f"python{VERSION}"
    python = target / "bin" / name
    if python.is_file():
        return python
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(base / "lib", staging / "lib", symlinks=True, ignore=_SKIPPED)
    (staging / "lib" / name / "site-packages").mkdir()  # where a venv looks for site.py's
    (staging / "bin").mkdir()
    binary = Path(sys.executable).resolve()
    if not binary.name.startswith("python"):  # a venv's python is a link to its base's
        binary = Path(sys._base_executable).resolve()
    copied = staging / "bin" / name
    shutil.copy2(binary, copied)
    data = copied.read_bytes()
    old, new = f"{base}/lib".encode() + b"\0", b"$ORIGIN/../lib\0"
    if old in data and len(new) <= len(old):
        copied.write_bytes(data.replace(old, new.ljust(len(old), b"\0"), 1))
    for path in [staging, *staging.rglob("*")]:
        if not path.is_symlink():
            os.chmod(path, path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))
    os.rename(staging, target)
    return python


def system_python() -> Path | None:
    """The system's Python of the course's version where every installed package allows it."""
    python = Path(f"/usr/bin/python{VERSION}")
    try:
        check_version(python)
    except InterpreterError:
        return None
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


def for_users(
    folder: Path,
    account: pwd.struct_passwd,
    base: Path | None,
    binds: dict[str, str] | None = None,
) -> Path:
    """The python ``account`` (and every classroom user) will run; bridged from ``base`` if given.

    Without ``base``: this Python where the users can run it, else the one an earlier setup
    of ``folder`` made, else a bridge from the system's Python or from a copy of this one's
    base (see the module's text). Raises InterpreterError, naming the remedy, when none runs.
    """
    own = Path(sys.executable)
    if base is None:
        if not binds and runs_as(own, account):
            return own
        earlier = folder / "python" / "bin" / "python"
        if earlier.is_file() and runs_as(earlier, account):
            return bridge(_bridged_base(folder) or earlier, folder / "python", binds)
        base = system_python() or copy_base(folder / "python-base")
    python = bridge(base, folder / "python", binds)
    if not runs_as(python, account):
        packages = sysconfig.get_paths()["purelib"]
        raise InterpreterError(
            f"the classroom's users cannot run {python} with the course's packages: may they "
            f"enter {folder} and every folder above {packages}? (a course checkout in a "
            "private home, /root, is closed to them: clone it where everyone may read, e.g. "
            f"/opt or /srv) / 教室的用户无法用课程的软件包运行 {python}：他们能否进入 {folder} "
            f"以及 {packages} 之上的每一级目录？（放在私有主目录如 /root 中的课程副本对他们是"
            "关闭的：请把课程克隆到所有人都能读取的位置，例如 /opt 或 /srv）"
        )
    return python
