"""What the classroom tests run on: a classroom set up with throw-away Unix users, its hub,
commands as a user.

Everything here is started or made by the test and stopped or removed by it, by process
id and by exact user name, also when the test fails.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from processes import free_port, stop_group, venv_env

from autograder.classroom.setup import INSTRUCTOR_ONLY

START_TIMEOUT_S = 120
LOCK = Path(tempfile.gettempdir()) / "autograd-course-classroom-tests.lock"
PYTHON = Path(sys.executable)


def processes_of(uids: set[int]) -> list[int]:
    """Pids of the processes whose real user is one of ``uids``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if entry.stat().st_uid in uids:
                found.append(int(entry.name))
    return found


@contextlib.contextmanager
def throwaway_users(names: list[str]) -> Iterator[list[str]]:
    """Yield ``names`` (which must not exist yet); at the end end their processes and remove
    exactly these users and their groups, whoever made them (the classroom's setup does)."""
    existing = [name for name in names if _exists(name)]
    assert not existing, f"users already exist: {existing}"
    try:
        yield names
    finally:
        uids = {pwd.getpwnam(name).pw_uid for name in names if _exists(name)}
        for _ in range(3):
            for pid in processes_of(uids):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.5)
        _remove_temp_files_of(uids)
        for name in names:
            if _exists(name):
                subprocess.run(["userdel", name], check=False, capture_output=True)
            if _group_exists(name):
                subprocess.run(["groupdel", name], check=False, capture_output=True)


def _remove_temp_files_of(uids: set[int]) -> None:
    """What their kernels left in the shared /tmp (torch's compile cache, for one):
    userdel leaves it, and a later user with the same uid would inherit it."""
    temp = Path(tempfile.gettempdir())
    for entry in temp.iterdir():
        with contextlib.suppress(OSError):
            if entry.lstat().st_uid not in uids:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def _group_exists(name: str) -> bool:
    import grp

    try:
        grp.getgrnam(name)
        return True
    except KeyError:
        return False


def classroom_command(*args: str, python: Path = PYTHON, **kwargs) -> subprocess.CompletedProcess:
    """``course-classroom ARGS`` with this tree's package (as root, like the instructor's sudo);
    ``python``: the course's Python to run it with (with ``cwd``, the checkout it imports)."""
    return subprocess.run(
        [str(python), "-m", "autograder.classroom.cli", *args],
        env=venv_env(),
        capture_output=True,
        text=True,
        check=False,
        **kwargs,
    )


def as_user(name: str, argv: list[str], cwd: Path, timeout: float = 300):
    """Run ``argv`` as user ``name`` (no other groups), with their HOME; return the result."""
    account = pwd.getpwnam(name)
    return subprocess.run(
        argv,
        cwd=cwd,
        user=account.pw_uid,
        group=account.pw_gid,
        extra_groups=[],
        env=venv_env(HOME=account.pw_dir, USER=name),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@contextlib.contextmanager
def running(argv: list[str], log: Path, ready: str, timeout_s: float = START_TIMEOUT_S):
    """Start ``argv`` in a new session; yield once ``ready`` shows in its output; stop its group."""
    with open(log, "wb") as output:
        process = subprocess.Popen(
            argv,
            env=venv_env(),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout_s
        while ready not in log.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{argv[:4]} did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield process
    finally:
        stop_group(process)


@contextlib.contextmanager
def running_hub(folder: Path, log: Path, python: Path = PYTHON) -> Iterator[subprocess.Popen]:
    """`course-classroom start FOLDER`; at the end the hub, and the proxy it started by pid."""
    argv = [str(python), "-m", "autograder.classroom.cli", "start", str(folder)]
    try:
        with running(argv, log, "JupyterHub is now running at") as hub:
            yield hub
    finally:
        # The hub stops its proxy itself; one it could not stop is ended by its recorded pid.
        with contextlib.suppress(OSError, ValueError):
            pid = int((folder / "hub" / "jupyterhub-proxy.pid").read_text().strip())
            if b"autograder.classroom.proxy" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)


def http_status(url: str) -> int:
    """The status of a GET, HTTP errors included."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def skip_unless_a_classroom_can_run() -> None:
    """Skip, with the reason, where this machine cannot set up a real classroom."""
    import pytest

    if os.geteuid() != 0:
        pytest.skip("the classroom makes throw-away Unix users: it needs root")
    if shutil.which("useradd") is None:
        pytest.skip("no useradd on this machine")
    pytest.importorskip("jupyterhub", reason="jupyterhub is not installed (the classroom extra)")
    # A checkout only root may enter (a clone in /root) needs nothing more: setup shows it to
    # the classroom's users through a read-only bind, as for an instructor (reach.py).


def _remove(folder: Path) -> None:
    """Remove a classroom's folder, after unmounting the binds setup made in it (reach.py):
    never through a mount into the course's checkout."""
    from autograder.classroom import disks, reach

    disks.release_all(folder / "room")  # learners' fixed-size homes (setup --home-mb)
    for home in disks.listed(folder / "room"):
        if reach.mounted_at(Path(home)):
            raise RuntimeError(f"{home} is still mounted; {folder} is left as it is")
    for target in [folder / "room" / reach.COURSE, folder / "room" / reach.ENV]:
        reach.release({str(target): ""})
        if reach.mounted_at(target):
            raise RuntimeError(f"{target} is still mounted; {folder} is left as it is")
    shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Classroom:
    """A classroom `course-classroom setup` made for a test, in ``folder``/room."""

    folder: Path  # the test's own folder: the classroom and logs
    ports: dict[str, int]  # setup's --port, --hub-port, --proxy-api-port
    setup_output: str

    @property
    def room(self) -> Path:
        return self.folder / "room"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.ports['port']}"

    @property
    def python(self) -> str:
        """The interpreter the classroom's users run (setup made a bridge where they cannot
        run this one)."""
        bridged = self.room / "python" / "bin" / "python"
        return str(bridged if bridged.is_file() else PYTHON)

    @property
    def env(self) -> Path:
        """The course environment as the classroom's users reach it: the hub's JUPYTER_PATH
        names it (a bind inside the classroom where the checkout lies in a private folder)."""
        import re

        config = (self.room / "hub" / "jupyterhub_config.py").read_text(encoding="utf-8")
        (found,) = re.findall(r"\"JUPYTER_PATH\": '([^']+)' \+ \"/share/jupyter\"", config)
        return Path(found)

    def home(self, name: str) -> Path:
        return self.room / "home" / name


@contextlib.contextmanager
def classroom(
    prefix: str,
    instructor: str,
    learners: list[str],
    zh_learners: list[str] | None = None,
    logs_on_failure: Path | None = None,
    setup_args: tuple[str, ...] = (),
    python: Path = PYTHON,
    checkout: Path | None = None,
) -> Iterator[Classroom]:
    """`course-classroom setup` of throw-away users (none may exist) in a new folder of /tmp
    (not pytest's tmp_path: the classroom's users must enter it), on free ports; at the end
    the users and the folder are removed, its logs (*.log) first copied to
    ``logs_on_failure`` when the test failed. ``setup_args``: more options for setup;
    ``python`` and ``checkout``: the course's Python and checkout setup runs from."""
    # One classroom at a time on this machine: setup closes the course's INSTRUCTOR_ONLY
    # folders to its instructor and the end restores what it found; a second classroom
    # started meanwhile would find them closed and "restore" that, to a removed group.
    with open(LOCK, "a+b") as lock:  # closing it releases the lock
        fcntl.flock(lock, fcntl.LOCK_EX)
        with _classroom(
            prefix, instructor, learners, zh_learners, logs_on_failure, setup_args, python, checkout
        ) as made:
            yield made


@contextlib.contextmanager
def _classroom(
    prefix, instructor, learners, zh_learners, logs_on_failure, setup_args, python, checkout
):
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir="/tmp"))
    folder.chmod(0o755)
    closed = {p: (p.stat().st_gid, p.stat().st_mode & 0o7777) for p in INSTRUCTOR_ONLY}
    ports = {name: free_port() for name in ("port", "hub-port", "proxy-api-port")}
    zh_learners = zh_learners or []
    names = [instructor, *learners, *zh_learners]
    try:
        with throwaway_users(names):
            made = classroom_command(
                "setup",
                str(folder / "room"),
                "--instructor",
                instructor,
                *(["--learners", *learners] if learners else []),
                *(["--zh-learners", *zh_learners] if zh_learners else []),
                *(arg for name, port in ports.items() for arg in (f"--{name}", str(port))),
                # No --python: where the classroom's users cannot run this one (a pyenv under
                # /root, as on the test machines), setup makes one they can (interpreter.py).
                *setup_args,
                python=python,
                cwd=checkout,
                timeout=600,
            )
            assert made.returncode == 0, made.stdout + made.stderr
            yield Classroom(folder, ports, made.stdout)
    except BaseException:
        if logs_on_failure is not None:
            logs_on_failure.mkdir(parents=True, exist_ok=True)
            for log in folder.glob("*.log"):
                shutil.copy(log, logs_on_failure / log.name)
        raise
    finally:
        _remove(folder)
        for path, (gid, mode) in closed.items():  # setup closed them to the instructor's group
            os.chown(path, -1, gid)
            path.chmod(mode)
