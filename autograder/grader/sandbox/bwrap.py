"""The sandbox every process that runs a submission's code starts in.

``launch.py`` (outside: joins the submission's cgroup, sets rlimits) execs
bubblewrap, which builds a fresh root from an allow-list: read-only system
folders, the Python environment, the ``autograder`` package and ``data/``;
nothing else of the project, no course, no other kernel. It drops every
capability, creates a user namespace (no further ones), and private PID, IPC,
network, UTS and cgroup namespaces. ``/tmp`` and ``/dev/shm`` are size-limited
tmpfs. Inside, ``confine.py`` restricts writes with Landlock to that scratch
(and to making sockets in the process's own folder) before exec'ing the command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grader.sandbox import isolate
from autograder.grader.sandbox.cgroups import Cgroup
from autograder.grader.sandbox.limits import Limits

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parents[1]  # the autograder package the grader itself imported
DATA = PACKAGE.parent / "data"
JUDGE_ONLY = PACKAGE / "references"  # the checks' answers: shown empty in every sandbox
SCRATCH = "/tmp/work"  # inside the sandbox: cwd, HOME and TMPDIR
NOBODY = 65534  # the uid a root grader's sandboxes run as
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts", "alternatives")


def readable_paths() -> tuple[str, ...]:
    """Host folders the sandbox shows read-only: the Python environment, the package, data/."""
    wanted = [sys.base_prefix, sys.prefix, str(PACKAGE)]
    if DATA.is_dir():
        wanted.append(str(DATA))
    return tuple(dict.fromkeys(wanted))


@dataclass(frozen=True)
class Confinement:
    """How one submission's processes are confined; plain data, picklable.

    ``bubblewrap`` and ``landlock`` are False only in an ``--unsafe`` run on a
    machine without them; ``cgroup`` is None there, or before a submission's
    group is made. ``uid``: a root grader's sandboxes run as this unprivileged user.
    """

    limits: Limits = field(default_factory=Limits)
    bubblewrap: bool = True
    landlock: bool = True
    cgroup: Cgroup | None = None
    readable: tuple[str, ...] = field(default_factory=readable_paths)
    python_path: str = str(PACKAGE.parent)
    uid: int | None = field(default_factory=lambda: NOBODY if os.geteuid() == 0 else None)

    @property
    def kind(self) -> str:
        """A short description for records and logs."""
        if not self.bubblewrap:
            return "none (unsafe)"
        return "bubblewrap" + ("+landlock" if self.landlock else "")


def sandbox_argv(
    command: list[str],
    workdir: Path,
    confinement: Confinement,
    *,
    env: Mapping[str, str] | None = None,
    sockets: bool = False,
    keep_capabilities: bool = False,
) -> list[str]:
    """``command`` wrapped: launcher (cgroup, rlimits) -> bubblewrap -> Landlock -> command.

    ``workdir`` is a host folder private to this one process (e.g. a kernel's
    connection file and sockets); it appears at the same path inside, read-only,
    or, with ``sockets``, where the process may also make and remove Unix sockets.
    The process starts in the scratch folder ``/tmp/work`` with exactly ``env``
    added to a minimal environment (PATH, HOME, TMPDIR, PYTHONPATH, LANG).
    ``keep_capabilities`` is for the zygote alone: it keeps every capability
    inside the sandbox's user namespace, which its children need to build their
    own namespaces before they drop them all (``isolate.py``).
    """
    limits = confinement.limits
    launcher = [sys.executable, "-I", "-S", str(HERE / "launch.py")]
    if confinement.cgroup:
        launcher += [f"--join={procs}" for procs in confinement.cgroup.procs_files()]
    if limits.address_space and not confinement.cgroup:  # a fallback: virtual is not memory
        launcher.append(f"--memory={limits.memory_bytes}")
    launcher.append(f"--file-size={limits.scratch_bytes}")
    if not confinement.bubblewrap:
        return [*launcher, "--", *command]
    if confinement.uid is not None:
        launcher.append(f"--user={confinement.uid}")
    workdir = Path(workdir).resolve()
    if workdir == Path(SCRATCH) or Path(SCRATCH) in workdir.parents:
        raise ValueError(f"{workdir} would lie inside the sandbox's scratch {SCRATCH}")
    capabilities = ["--cap-add" if keep_capabilities else "--cap-drop", "ALL"]
    argv = ["bwrap", "--unshare-user", "--disable-userns", *capabilities]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts"]
    argv += ["--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent"]
    argv += ["--new-session", "--clearenv"]
    for name, value in inside_environment(confinement, env).items():
        argv += ["--setenv", name, value]
    argv += _system_binds()
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--size", str(limits.shm_bytes), "--perms", "1777", "--tmpfs", "/dev/shm"]
    argv += ["--size", str(limits.scratch_bytes), "--perms", "0755", "--tmpfs", "/tmp"]
    argv += ["--dir", SCRATCH]
    for source, target in shown_paths(confinement):
        argv += ["--ro-bind", source, target]
    for hidden in hidden_paths(confinement):
        argv += ["--perms", "0555", "--size", "4096", "--tmpfs", hidden, "--remount-ro", hidden]
    argv += ["--bind" if sockets else "--ro-bind", str(workdir), str(workdir)]
    argv += ["--chdir", SCRATCH, "--"]
    if confinement.landlock:
        argv += [sys.executable, "-I", "-S", str(HERE / "confine.py")]
        argv += [f"--writable={SCRATCH}", "--writable=/dev/shm", "--devices=/dev"]
        argv += [f"--sockets={workdir}"] if sockets else []
        argv += ["--"]
    return [*launcher, "--", *argv, *command]


def shown_paths(confinement: Confinement) -> list[tuple[str, str]]:
    """(host folder, path inside) of every read-only folder the sandbox shows: each at its
    real path, and also where it was named, when that is through a symbolic link."""
    pairs = []
    for path in confinement.readable:
        real = os.path.realpath(path)
        pairs.append((real, real))
        if real != os.path.abspath(path):
            pairs.append((real, os.path.abspath(path)))
    return pairs


def hidden_paths(confinement: Confinement) -> list[str]:
    """Where the judge-only references would show through a shown folder: an empty,
    read-only folder is mounted there, so no process that runs learner code has them."""
    hidden = os.path.realpath(JUDGE_ONLY)
    shown = [target for _, target in shown_paths(confinement)]
    return [
        os.path.join(target, os.path.relpath(hidden, os.path.realpath(PACKAGE)))
        for target in shown
        if os.path.realpath(target) == os.path.realpath(PACKAGE)
    ]


def inside_environment(
    confinement: Confinement, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whole environment of a sandboxed process: a minimal one, plus ``env``."""
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": SCRATCH,
        "TMPDIR": SCRATCH,
        "PYTHONPATH": confinement.python_path,
        "LANG": "C.UTF-8",
        **(env or {}),
    }


def learner_scratch(confinement: Confinement, host_scratch: str) -> str:
    """Where a process that runs learner code works: the sandbox's own /tmp/work, or
    ``host_scratch`` where there is no sandbox (--unsafe)."""
    return SCRATCH if confinement.bubblewrap else str(host_scratch)


def learner_environment(
    confinement: Confinement, host_scratch: str, threads: int = 0, **extra: str
) -> dict[str, str]:
    """The whole environment of a process that runs learner code (a kernel, an observer).

    IPython's and matplotlib's folders lie in its scratch (``learner_scratch``), which
    without a sandbox is also its HOME and TMPDIR. The course's COURSE_* settings pass
    through.
    """
    scratch = learner_scratch(confinement, host_scratch)
    env = {
        "IPYTHONDIR": f"{scratch}/.ipython",
        "MPLCONFIGDIR": f"{scratch}/.matplotlib",
        "MPLBACKEND": "Agg",
        **{k: v for k, v in os.environ.items() if k.startswith("COURSE_")},
        **extra,
    }
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    env = inside_environment(confinement, env)
    if not confinement.bubblewrap:
        env.update(HOME=scratch, TMPDIR=scratch)
    return env


def _system_binds() -> list[str]:
    """Read-only system folders (merged-/usr symlinks kept as symlinks) and a few of /etc."""
    argv: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for name in ETC:
        if os.path.exists(f"/etc/{name}"):
            argv += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return argv


def missing_protections(course_root: Path) -> dict[str, str]:
    """What this machine lacks for a safe grading run: protection -> what to install or do."""
    from autograder.grader.sandbox.cgroups import find_parent

    problems = {}
    if shutil.which("bwrap") is None:
        problems["bubblewrap"] = (
            "bubblewrap is not installed: install it (`apt-get install bubblewrap`, "
            "`dnf install bubblewrap`)."
        )
    else:
        failure = _bubblewrap_failure()
        if failure:
            problems["bubblewrap"] = (
                "bubblewrap cannot build the sandbox (a user namespace with PID, IPC, network "
                f"and UTS namespaces, in which each kernel makes its own): {failure}. "
                "Allow unprivileged user namespaces and a bubblewrap that is not setuid "
                "(sysctl user.max_user_namespaces > 0; on Ubuntu 24.04 also "
                "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap)."
            )
    failure = _seccomp_failure()
    if failure:
        problems["seccomp"] = (
            f"the system-call filter of kernels and observers cannot be built ({failure}): "
            "install libseccomp (`apt-get install libseccomp2`, `dnf install libseccomp`)."
        )
    if _landlock_abi() < 1:
        problems["landlock"] = (
            "the kernel has no Landlock (Linux >= 5.13 with `landlock` in its `lsm=` list), "
            "which keeps a kernel from writing anywhere but its size-limited scratch."
        )
    parent = find_parent()
    if isinstance(parent, str):
        problems["cgroup"] = f"per-submission memory and process limits need a cgroup: {parent}"
    exposed = _exposed(course_root.resolve())
    if exposed:
        problems["layout"] = (
            f"the sandbox must show {exposed[0]} read-only, which holds {exposed[1]}: keep the "
            "course and the repository's sources outside the Python environment and the package."
        )
    return problems


def _exposed(course_root: Path) -> tuple[str, str] | None:
    """A readable folder that would show the course or the repository's secrets, if any."""
    secrets = [course_root] + [PACKAGE.parent / n for n in (".git", "solutions", "tests")]
    for shown in readable_paths():
        real = Path(os.path.realpath(shown))
        for secret in secrets:
            if real == secret or real in secret.parents:
                return str(real), str(secret)
    return None


# Inside the zygote's sandbox, what every forked kernel does first: its own namespaces, a mount.
_ZYGOTE_PROBE = (
    "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
    f"assert libc.unshare({isolate.CLONE_NEWNS | isolate.CLONE_NEWPID | isolate.CLONE_NEWNET})"
    " == 0, 'unshare'; "
    "assert libc.mount(b'tmpfs', b'/tmp', b'tmpfs', 0, None) == 0, 'mount'"
)


def _seccomp_failure() -> str | None:
    """Why the zygote could not build its seccomp filter here, or None when it can."""
    try:
        from autograder.grader.sandbox import seccomp_filter

        seccomp_filter.build()
    except Exception as error:  # libseccomp missing or unusable: the reason is the answer
        return f"{type(error).__name__}: {error}"
    return None


def _bubblewrap_failure() -> str | None:
    """None when bwrap builds the zygote's sandbox here and its children can confine themselves."""
    with tempfile.TemporaryDirectory(prefix="course-probe-") as folder:
        probe = sandbox_argv(
            [sys.executable, "-I", "-S", "-c", _ZYGOTE_PROBE],
            Path(folder),
            Confinement(landlock=False),
            keep_capabilities=True,
        )
        try:
            done = subprocess.run(probe, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            return str(error)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


def _landlock_abi() -> int:
    """Landlock's ABI version here (0: none), asked of a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-I", "-S", str(HERE / "confine.py"), "--probe"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return int(done.stdout.strip() or 0) if done.returncode == 0 else 0
