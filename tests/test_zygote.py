"""Kernels forked from one worker's zygote share nothing a learner can see.

Two submissions graded one after the other by the same worker (so by the same
zygote) each first look for what the other may have left, then leave all they
can: files in the scratch and in /dev/shm, an environment variable, a changed
grad mode and default dtype, an attribute on the torch module, a process left
running, a key in the user's and the session's keyring. Neither may see any of
it, nor the zygote, nor a key the grader's own session held before grading
began, and their random number generators must start from different seeds, as
two fresh interpreters' would. What they do inherit is what the zygote prepared for
every fork alike: its imports, frozen out of the garbage collector's walks, and the shipped
states of the lesson being graded, decoded.
"""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from processes import BIN, venv_env

from autograder.common import expectations
from autograder.grader.pipeline import runner
from autograder.grader.sandbox import forked, zygote
from autograder.grader.sandbox.zygote import HUGE_PAGES, SHIPPED_STATES

pytestmark = pytest.mark.notebooks
LESSON = "01_requires_grad"
PROBE = """\
import ctypes, gc, glob, os, random, subprocess
import numpy, pyseccomp
from autograder.common import expectations
libc = ctypes.CDLL(None, use_errno=True)
def syscall(name, *args):
    return libc.syscall(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name), *args)
seen = []
for ring in (-4, -3):  # KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING
    for key in (b'course-planted', GRADER_KEY):
        if syscall('keyctl', 10, ring, b'user', key, 0) >= 0:  # KEYCTL_SEARCH
            seen.append(f'key {key.decode()} in keyring {ring}')
if b'course-' in open('/proc/keys', 'rb').read():
    seen.append('a key in /proc/keys')
if glob.glob('/tmp/work/planted*') or glob.glob('/dev/shm/planted*'):
    seen.append('files')
if os.environ.get('PLANTED'):
    seen.append('environment')
if not torch.is_grad_enabled():
    seen.append('grad mode')
if torch.get_default_dtype() != torch.float32:
    seen.append('default dtype')
if hasattr(torch, 'planted'):
    seen.append('module attribute')
for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:
    try:
        command = open(f'/proc/{pid}/cmdline', 'rb').read()
    except OSError:
        continue
    if b'zygote' in command or b'planted' in command:
        seen.append('process ' + command.decode(errors='replace'))
state = [torch.initial_seed(), torch.rand(1).item(), random.random(), numpy.random.random()]
# what every kernel inherits ready: objects frozen out of the collector's walks, this
# lesson's shipped states decoded
prepared = {'frozen': gc.get_freeze_count(), 'decoded': expectations.load.cache_info().currsize}
found = {'seen': seen, 'random': state, 'prepared': prepared, 'threads': torch.get_num_threads()}
print('PROBE', json.dumps(found))
open('/tmp/work/planted', 'w').write('x')
open('/dev/shm/planted', 'w').write('x')
os.environ['PLANTED'] = '1'
torch.planted = 1
subprocess.Popen(['bash', '-c', 'exec -a planted sleep 300'])
torch.set_grad_enabled(False)
torch.set_default_dtype(torch.float64)
for ring in (-4, -3):
    syscall('add_key', b'user', b'course-planted', b'x', 1, ring)
"""
GRADER_KEY = b"course-grader-key"
# The grader starts in a session keyring of its own that holds a key, as a login's may.
WITH_KEY = f"""\
import ctypes, os, sys, pyseccomp
libc = ctypes.CDLL(None, use_errno=True)
def syscall(name, *args):
    return libc.syscall(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name), *args)
assert syscall('keyctl', 1, None) > 0  # KEYCTL_JOIN_SESSION_KEYRING: a new, anonymous one
assert syscall('add_key', b'user', {GRADER_KEY!r}, b'secret', 6, -3) > 0
os.execv(sys.argv[1], sys.argv[1:])
"""


def _course_grade(*args: str, temp: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "python"), "-c", WITH_KEY, str(BIN / "course-grade"), *args],
        capture_output=True,
        text=True,
        timeout=900,
        env={**venv_env(), "TMPDIR": str(temp)},
        check=False,
    )


def _zygote_folder(temp: Path, name: str) -> Path:
    """A zygote's folder as a grading worker leaves it, last changed two minutes ago."""
    folder = temp / f"{forked.FOLDER_PREFIX}{name}"
    (folder / "spool").mkdir(parents=True)
    (folder / "lock").touch()
    old = time.time() - 120
    os.utime(folder, (old, old))
    return folder


def test_one_workers_kernels_share_nothing_across_submissions(tmp_path, make_course):
    root = make_course(tmp_path / "course")
    learner = nbformat.read(str(root / "release" / LESSON / f"{LESSON}.ipynb"), as_version=4)
    setup = next(i for i, c in enumerate(learner.cells) if c.cell_type == "code")
    probe = f"import json\nGRADER_KEY = {GRADER_KEY!r}\n{PROBE}"
    learner.cells.insert(setup + 1, nbformat.v4.new_code_cell(probe))
    for student in ("first", "second"):
        folder = root / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        nbformat.write(learner, str(folder / f"{LESSON}.ipynb"))
    # the grader's own temporary folder, which the sandboxed user must be able to pass through
    temp = Path(tempfile.mkdtemp(prefix="zygote-test-", dir="/tmp"))
    temp.chmod(0o711)
    # what a worker killed by a signal leaves (its lock free), and a live worker's folder
    abandoned, alive = _zygote_folder(temp, "abandoned"), _zygote_folder(temp, "alive")
    held = os.open(alive / "lock", os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        graded = _course_grade(
            "grade", str(root), LESSON, "--workers", "1", "--cell-timeout", "30", temp=temp
        )
        assert graded.returncode == 0, graded.stderr[-3000:]
        # this run's zygote folder went with its worker; the abandoned one was swept
        assert list(temp.iterdir()) == [alive]
        assert not abandoned.exists()
    finally:
        os.close(held)
        shutil.rmtree(temp, ignore_errors=True)
    probes = {}
    for student in ("first", "second"):
        nb = nbformat.read(
            str(root / "autograded" / student / LESSON / f"{LESSON}.ipynb"), as_version=4
        )
        outputs = nb.cells[setup + 1].outputs
        found = re.search(r"^PROBE (.*)$", "".join(o.get("text", "") for o in outputs), re.M)
        assert found, (student, outputs)
        probes[student] = json.loads(found.group(1))
    for student, probe in probes.items():
        assert probe["seen"] == [], (student, probe["seen"])
        # the zygote's imports frozen (gc.freeze; ~420,000 objects) and lesson 01's states
        assert probe["prepared"]["frozen"] > 100_000, (student, probe["prepared"])
        assert probe["prepared"]["decoded"] == 1, (student, probe["prepared"])
        # one worker: its kernel and observer share the cores (runner.kernel_threads)
        assert probe["threads"] == runner.kernel_threads(1), (student, probe["threads"])
    first, second = probes["first"]["random"], probes["second"]["random"]
    assert all(a != b for a, b in zip(first, second, strict=True)), (first, second)


@pytest.mark.parametrize(
    ("cores", "workers", "threads"),
    [(2, 1, 1), (2, 2, 1), (8, 1, 4), (8, 2, 2), (8, 8, 1), (16, 3, 2)],
)
def test_a_workers_kernel_and_observer_share_its_cores(monkeypatch, cores, workers, threads):
    """Both run at once, each with its torch's threads: together no more than the worker's
    share of the cores, and never none (OpenMP threads waiting for a core spin)."""
    monkeypatch.setattr(runner, "default_workers", lambda: cores)
    assert runner.kernel_threads(workers) == threads


def _take_early(answers, payload: bytes, both, first_gone) -> None:
    """In a worker forked after ``start_early``: which zygote it took, whether it was ready,
    and the error its own child of that zygote left, the child started with ``payload``
    (not JSON: the child fails) while the other worker's child fails too. With
    ``first_gone``, it reads that error once the other worker has ended."""
    forked.take_early()
    (zygote,) = forked._ZYGOTES.values()
    ready = zygote._ready
    mark = zygote.log_mark()
    both.wait(timeout=60)
    child = zygote.fork("observer", None, {}, payload=payload, cwd="/")
    child.wait(timeout=60)
    both.wait(timeout=60)
    if first_gone is not None:
        first_gone.wait(timeout=60)
    answers.put((payload, zygote.process.pid, ready, zygote.alive(), zygote.last_error(mark)))


def test_workers_forked_after_an_early_start_share_its_zygote(tmp_path):
    """`course-grade` starts the run's zygote before it imports torch and nbgrader
    (``forked.start_early``) and has it ready before it forks its workers
    (``forked.wait_early``): every worker uses that one, each reads only the errors of its
    own children (two failing at once), a worker that ends leaves it to the others, and the
    process that started it ends it. Asked to (a run of many submissions), it holds its
    memory in huge pages."""
    from autograder.grader.sandbox import bwrap

    if bwrap.missing_protections(tmp_path):
        pytest.skip(f"skipped: this machine lacks {', '.join(bwrap.missing_protections(tmp_path))}")
    fork = multiprocessing.get_context("fork")
    answers, both, first_gone = fork.Queue(), fork.Barrier(2), fork.Event()
    forked.start_early(bwrap.Confinement(), 1, False, huge_pages=True)
    forked.wait_early()
    (early,) = forked._EARLY
    try:
        if _collapses_here():  # as a run of many submissions asks (huge_pages.py)
            assert _huge_kib(_zygote_pid(early.process.pid)) > 100 * 1024
        first, second = (
            fork.Process(target=_take_early, args=(answers, b"[", both, None)),
            fork.Process(target=_take_early, args=(answers, b"not json", both, first_gone)),
        )
        first.start()
        second.start()
        taken = [answers.get(timeout=120)]
        first.join(timeout=60)
        first_gone.set()
        taken.append(answers.get(timeout=120))
        second.join(timeout=60)
        assert [pid for _, pid, _, _, _ in taken] == [early.process.pid] * 2
        assert all(ready and alive for _, _, ready, alive, _ in taken), taken
        errors = {payload: said for payload, _, _, _, said in taken}
        assert "char 1" in errors[b"["] and "char 0" in errors[b"not json"], errors
        assert early.alive(), "a worker that ended took the run's zygote with it"
    finally:
        forked.end_early()
    assert not early.alive(), "the zygote outlived the run"


def _zygote_pid(launcher: int) -> int:
    """The zygote's host PID: the innermost process under the launcher (which names the
    zygote's module among its own arguments, as bubblewrap does) that runs the module."""
    found, pending = [], [launcher]
    while pending:
        pid = pending.pop()
        if b"autograder.grader.sandbox.zygote" in Path(f"/proc/{pid}/cmdline").read_bytes():
            found.append(pid)
        for task in Path(f"/proc/{pid}/task").iterdir():
            pending += [int(c) for c in (task / "children").read_text().split()]
    assert found, "no zygote under the launcher"
    return found[-1]


def _huge_kib(pid: int) -> int:
    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    return int(next(line for line in rollup if line.startswith("AnonHugePages")).split()[1])


def _collapses_here() -> bool:
    """Whether this Linux collapses memory into huge pages (tried on 4 MiB of this process's
    own) and this test may read the (undumpable) zygote's memory map: root's."""
    import ctypes
    import mmap

    from autograder.grader.sandbox import huge_pages

    if os.geteuid() != 0:
        return False
    size = 2 * huge_pages.HUGE_PAGE
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory.write(b"x" * size)
    start = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    return huge_pages.collapse_range(start, start + size)


def test_the_zygote_decodes_the_shipped_states_of_the_lessons_graded_only():
    lessons = forked.shipped_lessons(["03_eval_vs_no_grad", "01_requires_grad", "homework"])
    assert lessons == ("lesson01", "lesson03")
    assert forked.zygote_env(1, lessons)[SHIPPED_STATES] == "lesson01 lesson03"
    assert SHIPPED_STATES not in forked.zygote_env(1)
    assert forked.zygote_env(1, (), huge_pages=True)[HUGE_PAGES] == "1"
    assert HUGE_PAGES not in forked.zygote_env(1)
    expectations.load.cache_clear()
    try:
        zygote.preload_shipped_states(["lesson03", "../lesson03", "lesson3"])
        assert expectations.load.cache_info().currsize == 1
    finally:
        expectations.load.cache_clear()
