"""Hostile submissions against `course-grade grade`, as root and as an unprivileged user.

Each attack is a learner notebook (the blank one, so that nothing it earns is
honest) whose inserted cell tries one way out and prints ``ESCAPED: …`` for
every attempt that worked, then ``ATTEMPTED``; the system-call attack also
makes its calls from an exercise's answer, so in the observer too. Submission-folder attacks
(links, special files, odd names, 20,000 files) must be rejected unread. For
every run: nothing earns a point, every status and reason is as expected,
nothing outside the grader's own outputs changes (course, other submissions,
repository), no process is left, and the batch ends in bounded time.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
import pytest
from nbgrader_course import exercises_only
from processes import BIN, reach_for_others, venv_env

from autograder.grader.demo import _insert_after_setup
from autograder.grader.pipeline import records, submission
from autograder.grader.sandbox import bwrap, cgroups

REPO = Path(__file__).resolve().parent.parent
LESSON = "01_requires_grad"
MARKER = f"course-sandbox-test-{uuid.uuid4().hex[:8]}"
CELL_TIMEOUT, NOTEBOOK_TIMEOUT, BATCH_LIMIT_S = 10, 30, 600
# Two workers: att_kernels looks for another learner's kernel while one is running.
GRADE_ARGS = [
    *("--cell-timeout", str(CELL_TIMEOUT), "--notebook-timeout", str(NOTEBOOK_TIMEOUT)),
    *("--memory-mb", "1024", "--processes", "32", "--scratch-mb", "32", "--workers", "2"),
]
IS_ROOT = os.geteuid() == 0


def cli(*args: str, env=None, timeout: int = 600, wrapper=()) -> subprocess.CompletedProcess:
    command = [*wrapper, sys.executable, "-m", "autograder.grader.cli", *args]
    env = env or venv_env(PYTHONPATH=str(REPO))
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def _attack(body: str) -> str:
    """A cell that runs ``body`` (which appends to ``escaped``), then reports."""
    return (
        "escaped = []\n"
        f"{body}\n"
        "for item in escaped:\n    print('ESCAPED:', item)\n"
        "print('ATTEMPTED')"
    )


def attacks(course: Path) -> dict[str, str]:
    """Learner code that tries to leave the sandbox, keyed by the student who submits it."""
    other = course / "submitted" / "solution" / LESSON / f"{LESSON}.ipynb"
    secrets = [
        course / "source" / LESSON / f"{LESSON}.ipynb",
        course / "gradebook.db",
        course / "nbgrader_config.py",
        other,
        REPO / ".git",
        REPO / "solutions",
        REPO / "tests",
        REPO / "README.md",
        Path.home() / ".bash_history",
    ]
    writable = [
        course / "nbgrader_config.py",
        other,
        REPO / "autograder" / "__init__.py",
        Path(sys.prefix) / "pyvenv.cfg",
        Path("/tmp") / MARKER,
        Path("/etc") / MARKER,
    ]
    sleeper = f"import time; time.sleep(600)  # {MARKER}"
    return {
        "att_mount": _attack(
            "import ctypes\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            f"for target in ['/', '/tmp', '/proc', '/usr', {str(REPO / 'autograder')!r}]:\n"
            "    if libc.umount2(target.encode(), 2) == 0:\n"
            "        escaped.append('umount ' + target)\n"
            "if libc.mount(None, b'/', None, 32 | 4096, None) == 0:\n"
            "    escaped.append('remount / rw')\n"
            "if libc.mount(b'none', b'/tmp/work', b'tmpfs', 0, None) == 0:\n"
            "    escaped.append('mount tmpfs')\n"
            "if libc.unshare(0x10000000) == 0:\n"
            "    escaped.append('new user namespace')\n"
            "if libc.setuid(0) == 0 and open('/proc/self/status').read().count('CapEff:\\t0000000000000000') == 0:\n"  # noqa: E501
            "    escaped.append('capabilities')"
        ),
        "att_read": _attack(
            "import os, subprocess\n"
            f"for path in {[str(p) for p in secrets]!r}:\n"
            "    if os.path.exists(path):\n"
            "        escaped.append('sees ' + path)\n"
            "shown = subprocess.run(['git', '-C', "
            f"{str(REPO)!r}, 'show', 'HEAD:README.md'], capture_output=True)\n"
            "if shown.returncode == 0:\n"
            "    escaped.append('git show')"
        ),
        "att_write": _attack(
            f"for path in {[str(p) for p in writable]!r}:\n"
            "    try:\n"
            "        with open(path, 'a') as handle:\n"
            "            handle.write('# pwned')\n"
            "        escaped.append('wrote ' + path)\n"
            "    except OSError:\n"
            "        pass"
        ),
        "att_kernels": _attack(
            "import glob, os, socket\n"
            "from ipykernel.connect import get_connection_file\n"
            "own = os.path.dirname(get_connection_file())\n"
            "for found in glob.glob('/tmp/*/kernel.json') + glob.glob('/tmp/*/*/kernel.json'):\n"
            "    if os.path.dirname(found) != own:\n"
            "        escaped.append('sees ' + found)\n"
            "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
            "    try:\n"
            "        line = open(f'/proc/{pid}/cmdline').read()\n"
            "    except OSError:\n"
            "        continue\n"
            "    if 'kernel.json' in line and own not in line:\n"
            "        escaped.append('sees process ' + line)\n"
            "for name in ['x.txt', 'kernel-9']:\n"
            "    try:\n"
            "        open(os.path.join(own, name), 'w').write('x' * 1000)\n"
            "        escaped.append('writes files beside the sockets')\n"
            "    except OSError:\n"
            "        pass\n"
            "try:\n"
            "    socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
            "    escaped.append('network')\n"
            "except OSError:\n"
            "    pass"
        ),
        "att_memory": _attack(
            "import subprocess, sys, time\n"
            "child = \"import time; b = b'x' * (500 * 1024**2); print('held', flush=True); "
            'time.sleep(30)"\n'
            "children = [subprocess.Popen([sys.executable, '-c', child], stdout=subprocess.PIPE,"
            " text=True) for _ in range(3)]\n"
            "held = sum(c.stdout.readline().strip() == 'held' for c in children)\n"
            # a child the OOM killer ended after it said 'held' no longer holds its share
            "time.sleep(1)\n"
            "if held == 3 and all(c.poll() is None for c in children):\n"
            "    escaped.append('three children held 1500 MiB under a 1024 MiB limit')\n"
            "for c in children:\n"
            "    c.kill()"
        ),
        "att_fill": _attack(
            "import os\n"
            "for folder, size in [('/tmp/work', 64), ('/dev/shm', 16), ('/tmp', 1)]:\n"
            "    written = 0\n"
            "    try:\n"
            "        with open(os.path.join(folder, 'fill'), 'wb') as handle:\n"
            "            for _ in range(size):\n"
            "                handle.write(b'x' * 1024**2)\n"
            "                written += 1\n"
            "            handle.flush()\n"
            "    except OSError:\n"
            "        pass\n"
            "    if written >= size:\n"
            "        escaped.append(f'wrote {size} MiB to {folder}')"
        ),
        "att_syscalls": _attack(
            SYSCALLS + "for line in probe_syscalls():\n"
            "    print('SYSCALL', line)\n"
            "    if line.endswith('ESCAPED'):\n"
            "        escaped.append(line)"
        ),
        "att_procs": _attack(
            "import subprocess, sys, os\n"
            "started = []\n"
            "for _ in range(60):\n"
            "    try:\n"
            f"        started.append(subprocess.Popen([sys.executable, '-c', {sleeper!r}],"
            " start_new_session=True))\n"
            "    except OSError:\n"
            "        break\n"
            "if len(started) >= 60:\n"
            "    escaped.append('60 processes under a limit of 32')\n"
            "try:\n"
            "    if os.fork() == 0:\n"
            "        os.setsid()\n"
            f"        os.execv(sys.executable, [sys.executable, '-c', {sleeper!r}])\n"
            "except OSError:\n"
            "    pass"
        ),
    }


# System calls a seccomp filter refuses in every kernel and observer (seccomp_filter.py), each
# tried for real: without the filter, the keyring's, ptrace's, unshare's, perf's, userfaultfd's
# and io_uring's calls all work for an unprivileged process.
SYSCALLS = """\
import ctypes, errno, struct, subprocess
import pyseccomp
def probe_syscalls():
    libc = ctypes.CDLL(None, use_errno=True)
    def call(name, *args):
        result = libc.syscall(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name), *args)
        return name + '=' + ('ESCAPED' if result >= 0 else errno.errorcode[ctypes.get_errno()])
    child = subprocess.Popen(['sleep', '30'])
    perf = ctypes.create_string_buffer(128)  # a software clock, user space only
    struct.pack_into('<IIQ', perf, 0, 1, 128, 0)
    struct.pack_into('<Q', perf, 40, 0x61)
    bpf = ctypes.create_string_buffer(72)  # a one-entry array map
    struct.pack_into('<IIII', bpf, 0, 2, 4, 4, 1)
    found = [
        call('add_key', b'user', b'course-probe', b'x', 1, -4),
        call('keyctl', 0, -4, 1),
        call('request_key', b'user', b'course-probe', None, 0),
        call('ptrace', 0x4206, child.pid, 0, 0),
        call('unshare', 0x200),
        call('mount', b'none', b'/tmp/work', b'tmpfs', 0, None),
        call('bpf', 0, bpf, 72),
        call('perf_event_open', perf, 0, -1, -1, 0),
        call('userfaultfd', 0x80001),
        call('io_uring_setup', 1, ctypes.create_string_buffer(120)),
    ]
    child.kill()
    return found
"""
SYSCALL_NAMES = (
    *("add_key", "keyctl", "request_key", "ptrace", "unshare", "mount", "bpf"),
    *("perf_event_open", "userfaultfd", "io_uring_setup"),
)
# Endless but idle: the replays' budget is what is tested (busy loops are the demo class's).
# Every exercise cell hangs (7 x CELL_TIMEOUT > NOTEBOOK_TIMEOUT); the name sorts first, so the
# batch grades it first and the other submissions while it waits out its budget.
HANG = "import time\nwhile True:\n    time.sleep(1)"
REPLAY = "att_endless_replay"

REJECTED = {
    "rej_symlinked_notebook": "symbolic link",
    "rej_dev_zero": "symbolic link",
    "rej_symlink_loop": "symbolic link",
    "rej_many_files": "more than 200 files",
    "rej_fifo": "special file",
    "rej_linked_folder": "symbolic link",
    "rej_dotfile": "starting with '.'",
    "rej_control_name": "control",
}


def _write_rejected(course: Path, learner_nb) -> None:
    submitted = course / "submitted"

    def folder(student: str) -> Path:
        path = submitted / student / LESSON
        path.mkdir(parents=True)
        return path

    solution = submitted / "solution" / LESSON / f"{LESSON}.ipynb"
    os.symlink(solution, folder("rej_symlinked_notebook") / f"{LESSON}.ipynb")
    path = folder("rej_dev_zero")
    nbformat.write(learner_nb, str(path / f"{LESSON}.ipynb"))
    os.symlink("/dev/zero", path / "data.bin")
    path = folder("rej_symlink_loop")
    nbformat.write(learner_nb, str(path / f"{LESSON}.ipynb"))
    os.symlink("b", path / "a")
    os.symlink("a", path / "b")
    path = folder("rej_many_files")
    nbformat.write(learner_nb, str(path / f"{LESSON}.ipynb"))
    for k in range(20_000):
        (path / f"f{k}.txt").write_bytes(b"x")
    path = folder("rej_fifo")
    nbformat.write(learner_nb, str(path / f"{LESSON}.ipynb"))
    os.mkfifo(path / "pipe")
    (submitted / "rej_linked_folder").symlink_to(submitted / "solution")
    path = folder("rej_dotfile")
    nbformat.write(learner_nb, str(path / f"{LESSON}.ipynb"))
    (path / ".bashrc").write_text("x")
    path = folder("rej_control_name")
    nbformat.write(learner_nb, str(path / f"{LESSON}.ipynb"))
    (path / "bad\nname.txt").write_text("x")


@pytest.fixture(scope="module")
def template(make_course):
    """One course with the solution, the attacks and the rejected folders, made once."""
    base = Path(tempfile.mkdtemp(prefix="course-sandbox-test-", dir="/tmp"))
    os.chmod(base, 0o755)
    course = make_course(base / "course")
    done = cli("demo-class", str(course), LESSON)
    assert done.returncode == 0, done.stderr[-2000:]
    submitted = course / "submitted"
    for entry in list(submitted.iterdir()):
        if entry.name != "solution":
            shutil.rmtree(entry)
    # the learner notebook without its demonstrations: no attack needs them
    released = nbformat.read(str(course / "release" / LESSON / f"{LESSON}.ipynb"), as_version=4)
    learner = exercises_only(released)
    for student, code in attacks(course).items():
        (submitted / student / LESSON).mkdir(parents=True)
        nb = _insert_after_setup(learner, code)
        nbformat.write(nb, str(submitted / student / LESSON / f"{LESSON}.ipynb"))
    replay = nbformat.v4.new_notebook(metadata=learner.metadata)
    replay.cells = [c for c in learner.cells]
    for cell in replay.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            cell.source = HANG
    (submitted / REPLAY / LESSON).mkdir(parents=True)
    nbformat.write(replay, str(submitted / REPLAY / LESSON / f"{LESSON}.ipynb"))
    _write_rejected(course, learner)
    (course / "source" / LESSON / "instructor_only.txt").write_text("not for learners")
    yield course
    shutil.rmtree(base, ignore_errors=True)


def _hash_tree(folder: Path, skip: tuple[str, ...] = ()) -> dict[str, str]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        rel = os.path.relpath(dirpath, folder)
        dirnames[:] = [d for d in dirnames if os.path.join(rel, d).lstrip("./") not in skip]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                found[path] = "link:" + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    found[path] = hashlib.sha256(handle.read()).hexdigest()
            else:
                found[path] = "special"
    return found


def _course_state(course: Path) -> dict[str, str]:
    """Everything in the course that grading must not change (its own outputs excluded)."""
    state = _hash_tree(course, skip=("autograded", "grading", "feedback"))
    state.pop(str(course / "gradebook.db"), None)
    return state


def _repo_state() -> str:
    """Tracked changes, untracked files and the git folder's config and hooks."""
    git = ["git", "-C", str(REPO)]
    parts = [
        subprocess.run([*git, "status", "--porcelain"], capture_output=True).stdout,
        subprocess.run([*git, "diff", "HEAD"], capture_output=True).stdout,
    ]
    common = subprocess.run(
        [*git, "rev-parse", "--git-common-dir"], capture_output=True, text=True
    ).stdout.strip()
    common_dir = (REPO / common).resolve()
    for name in ("config", "HEAD"):
        if (common_dir / name).is_file():
            parts.append((common_dir / name).read_bytes())
    parts.append(repr(sorted(_hash_tree(common_dir / "hooks").items())).encode())
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


def _leftovers() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if MARKER.encode() in (entry / "cmdline").read_bytes():
                    found.append(entry.name)
            except OSError:
                continue
    return found


def _kernel_uids(ancestor: int) -> set[int]:
    """Host uids of the zygotes and their forks (kernels, observers) below ``ancestor``."""
    uids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            # the zygote and its forks; not the launcher or bwrap, whose arguments end alike
            if argv[1:5] != [b"-s", b"-P", b"-m", b"autograder.grader.sandbox.zygote"]:
                continue
            status = (entry / "status").read_text()
            uid = int(status.split("Uid:")[1].split()[0])
            pid = int(entry.name)
            while pid > 1 and pid != ancestor:
                pid = int(
                    (Path("/proc") / str(pid) / "status").read_text().split("PPid:")[1].split()[0]
                )
            if pid == ancestor:
                uids.add(uid)
        except (OSError, IndexError, ValueError):
            continue
    return uids


class AsUser:
    """Run a command as a throwaway unprivileged user with a delegated cgroup (root only)."""

    def __init__(self):
        self.reach = reach_for_others()
        if self.reach is None:
            pytest.skip("skipped: the environment or the repository is not readable by others")
        self.name = f"cgt{uuid.uuid4().hex[:8]}"
        subprocess.run(["useradd", "--no-create-home", "-s", "/bin/false", self.name], check=True)
        self.uid = pwd.getpwnam(self.name).pw_uid
        self.groups: list[Path] = []
        parent = cgroups.find_parent()
        assert isinstance(parent, cgroups.CgroupParent), parent
        self.version = parent.version
        for folder in parent.folders:
            group = Path(folder) / f"course-test-{self.name}"
            group.mkdir()
            self.groups.append(group)
        if self.version == 2:
            (self.groups[0] / "cgroup.subtree_control").write_text("+memory +pids")
            leaf = self.groups[0] / "main"
            leaf.mkdir()
            self.groups.append(leaf)
        for group in self.groups:
            subprocess.run(["chown", "-R", self.name, str(group)], check=True)

    def wrapper(self, delegated: bool = True) -> list[str]:
        """A prefix: private mount namespace where the environment and the repository are
        reachable wherever they were installed (root's home included), then the user."""
        join = ""
        if delegated:
            leaves = [self.groups[-1]] if self.version == 2 else self.groups
            join = "".join(f"echo $$ > {g / 'cgroup.procs'}; " for g in leaves)
        script = (
            f"set -e; {self.reach}{join}"
            f'exec setpriv --reuid={self.uid} --regid={self.uid} --clear-groups "$@"'
        )
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]

    def close(self) -> None:
        for group in reversed(self.groups):
            cgroups.Cgroup((str(group),)).kill_and_remove()
        subprocess.run(["userdel", self.name], check=False)


@pytest.fixture(scope="module", params=["root", "user"])
def graded(request, template):
    """The class graded once per identity: the course copy, outputs, timings, state before."""
    if request.param == "root" and not IS_ROOT:
        pytest.skip("skipped: grading as root needs root")
    if not bwrap.shutil.which("bwrap"):
        pytest.skip("skipped: bubblewrap is not installed (apt-get install bubblewrap)")
    base = Path(tempfile.mkdtemp(prefix="course-sandbox-run-", dir="/tmp"))
    os.chmod(base, 0o755)
    course = base / "course"
    subprocess.run(["cp", "-a", str(template), str(course)], check=True)  # links, fifo and all
    user = None
    wrapper: list[str] = []
    env = venv_env(PYTHONPATH=str(REPO))
    if request.param == "user" and IS_ROOT:
        if not shutil.which("useradd") or not shutil.which("setpriv"):
            pytest.skip("skipped: useradd and setpriv are needed to grade as another user")
        user = AsUser()
        subprocess.run(["chown", "-R", user.name, str(base)], check=True)
        wrapper = user.wrapper()
        env = dict(env, HOME=str(base))
    missing = bwrap.missing_protections(course)
    if missing and not IS_ROOT:
        pytest.skip(f"skipped: this machine lacks {', '.join(missing)}")
    before = _course_state(course), _repo_state()
    started = time.monotonic()
    command = [*wrapper, sys.executable, "-m", "autograder.grader.cli", "grade", str(course)]
    grading = subprocess.Popen(
        [*command, LESSON, *GRADE_ARGS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    kernel_uids: set[int] = set()
    while grading.poll() is None and time.monotonic() - started < BATCH_LIMIT_S + 60:
        kernel_uids |= _kernel_uids(grading.pid)
        time.sleep(0.5)
    out, err = grading.communicate(timeout=60)
    done = subprocess.CompletedProcess(grading.args, grading.returncode, out.decode(), err.decode())
    elapsed = time.monotonic() - started
    for record in records.load(course, LESSON):
        print(request.param, record.student, record.status, record.seconds, record.reason[:80])
    refused = None
    if user:
        refused = cli("grade", str(course), LESSON, env=env, wrapper=user.wrapper(False))
    time.sleep(1)
    leftovers = _leftovers()
    yield {
        "course": course,
        "done": done,
        "elapsed": elapsed,
        "before": before,
        "after": (_course_state(course), _repo_state()),
        "leftovers": leftovers,
        "refused": refused,
        "user": user,
        "kernel_uids": kernel_uids,
    }
    if user:
        user.close()
    shutil.rmtree(base, ignore_errors=True)


pytestmark = pytest.mark.notebooks


def _outputs(course: Path, student: str) -> str:
    path = course / "autograded" / student / LESSON / f"{LESSON}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    texts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            texts.append(output.get("text", "") + output.get("evalue", ""))
    return "\n".join(texts)


def test_the_batch_completes_in_bounded_time(graded):
    assert graded["done"].returncode == 0, graded["done"].stderr[-3000:]
    assert graded["elapsed"] < BATCH_LIMIT_S
    found = {r.student for r in records.load(graded["course"], LESSON)}
    assert {"solution", REPLAY, *attacks(graded["course"]), *REJECTED} <= found


def test_no_attack_escapes(graded):
    course = graded["course"]
    by_student = {r.student: r for r in records.load(course, LESSON)}
    for student in attacks(course):
        assert by_student[student].sandbox == "bubblewrap+landlock"
        text = _outputs(course, student)
        assert "ESCAPED" not in text, (student, text[:2000])
        if student != "att_memory":  # there the cgroup may kill the kernel itself
            assert "ATTEMPTED" in text, (student, by_student[student].reason, text[:2000])


def test_system_calls_outside_the_allow_list_are_refused_in_kernels(graded):
    path = graded["course"] / "autograded" / "att_syscalls" / LESSON / f"{LESSON}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    kernel = ""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            kernel += output.get("text", "") if "ATTEMPTED" in output.get("text", "") else ""
    for name in SYSCALL_NAMES:
        assert f"SYSCALL {name}=EPERM" in kernel, (name, kernel)


def test_system_calls_outside_the_allow_list_are_refused_in_observers(tmp_path):
    """The observer runs no cell that breaks the learner-code policy (as the probe's ctypes
    does), so the probe is handed to a real confined observer directly, as its statements."""
    import json

    from autograder.grader.pipeline.verdicts import Observation
    from autograder.grader.sandbox import forked

    if bwrap.missing_protections(tmp_path):
        pytest.skip(f"skipped: this machine lacks {', '.join(bwrap.missing_protections(tmp_path))}")
    confinement = bwrap.Confinement()
    zygote = forked.Zygote(confinement, threads=1, cgroups=False)
    folder = zygote.workdir()
    job = {
        "statements": [SYSCALLS],
        "tests": [
            {
                "grade_id": "probe",
                "source": "raise RuntimeError('SYSCALLS ' + ' '.join(probe_syscalls()))",
                "upto": 1,
            }
        ],
        "timeout_s": 120,
        "budget_s": 180,
        "threads": 1,
        "log": "probe.observer.log",
    }
    try:
        child = zygote.fork(
            "observer",
            None,
            bwrap.learner_environment(confinement, str(folder), 1),
            cwd=bwrap.learner_scratch(confinement, str(folder)),
            payload=json.dumps(job).encode(),
        )
        observed = Observation(child, [], time.monotonic() + 180).collect()["probe"]
    finally:
        zygote.stop()
        shutil.rmtree(folder, ignore_errors=True)
    for name in SYSCALL_NAMES:
        assert f"{name}=EPERM" in observed.get("reason", ""), (name, observed)


def test_learner_code_never_runs_as_root_on_the_host(graded):
    uids = graded["kernel_uids"]
    assert uids, "no kernel was seen running"
    assert 0 not in uids, uids


def test_hostile_submissions_earn_nothing_and_the_solution_still_does(graded):
    from nbgrader.api import Gradebook, MissingEntry

    from autograder import course as course_module

    course = graded["course"]
    with Gradebook(course_module.gradebook_url(course)) as gradebook:
        assert gradebook.find_submission_notebook(LESSON, LESSON, "solution").score > 0
        for student in [*attacks(course), REPLAY, *REJECTED]:
            try:
                score = gradebook.find_submission_notebook(LESSON, LESSON, student).score
            except MissingEntry:
                score = 0
            assert score == 0, student


def test_rejected_folders_get_their_status_and_reason(graded):
    by_student = {r.student: r for r in records.load(graded["course"], LESSON)}
    for student, fragment in REJECTED.items():
        record = by_student[student]
        assert record.status == "rejected", (student, record.status, record.reason)
        assert fragment in record.reason, (student, record.reason)
        assert not (graded["course"] / "autograded" / student).exists()


def test_endless_replays_stop_at_the_notebook_budget(graded):
    (record,) = [r for r in records.load(graded["course"], LESSON) if r.student == REPLAY]
    assert record.status == "timed out"
    assert "out of time" in record.reason, record.reason
    assert record.seconds < NOTEBOOK_TIMEOUT + 30


def test_memory_and_processes_are_bounded_per_submission(graded):
    by_student = {r.student: r for r in records.load(graded["course"], LESSON)}
    # The cgroup's OOM killer may end the kernel (crashed) or one of its children; the cell
    # imports subprocess and sys, so a kernel that survives leaves the submission flagged.
    assert by_student["att_memory"].status in ("flagged", "crashed")
    assert "ESCAPED" not in _outputs(graded["course"], "att_procs")


def test_nothing_outside_the_grading_outputs_changed(graded):
    before_course, before_repo = graded["before"]
    after_course, after_repo = graded["after"]
    assert after_course == before_course
    assert after_repo == before_repo
    assert not (Path("/tmp") / MARKER).exists()


def test_no_process_is_left_running(graded):
    assert graded["leftovers"] == []


def test_feedback_holds_only_the_feedback(graded):
    course = graded["course"]
    user = graded["user"]
    env = venv_env(PYTHONPATH=str(REPO))
    wrapper = user.wrapper(False) if user else ()
    done = cli("feedback", str(course), LESSON, "--student", "solution", env=env, wrapper=wrapper)
    assert done.returncode == 0, done.stderr[-2000:]
    folder = course / "feedback" / "solution" / LESSON
    assert sorted(p.name for p in folder.iterdir()) == [f"{LESSON}.html"]


def test_an_unprivileged_grader_without_cgroup_delegation_is_refused(graded):
    if graded["user"] is None:
        pytest.skip("skipped: only meaningful when the test made an unprivileged user")
    refused = graded["refused"]
    assert refused.returncode == 2
    assert "cgroup" in refused.stderr and "--unsafe" in refused.stderr


@pytest.mark.skipif(not IS_ROOT, reason="skipped: needs root to hide bwrap from PATH safely")
def test_grading_refuses_without_bubblewrap_and_without_unsafe(tmp_path):
    env = venv_env(PYTHONPATH=str(REPO))
    env["PATH"] = str(BIN)  # no /usr/bin: no bwrap
    done = cli("grade", str(tmp_path), LESSON, env=env)
    assert done.returncode == 2 and "bubblewrap is not installed" in done.stderr
    done = cli("grade", str(tmp_path), LESSON, "--sandbox", "none")
    assert done.returncode == 2 and "--unsafe" in done.stdout + done.stderr


def test_a_submission_folder_is_judged_without_following_links(tmp_path):
    course = tmp_path / "course"
    folder = course / "submitted" / "ann" / LESSON
    folder.mkdir(parents=True)
    bounds = submission.Bounds(max_files=5)
    assert submission.rejection(course, LESSON, "ann", bounds) is None
    for k in range(6):
        (folder / f"f{k}").write_text("x")
    assert "more than 5" in submission.rejection(course, LESSON, "ann", bounds).en
    assert "control" in submission.plain_name_problem("a\x1bb").en
    assert submission.plain_name_problem("ok name.ipynb") is None
