"""The classroom's grading cluster: closed to everyone who does not hold its certificate.

Dask runs whatever function a connected client sends, so the scheduler speaks only TLS
with a certificate made for this classroom (mutual: a client without the key is refused
before it can send anything). The key lies in ``<classroom>/cluster/``, readable by the
grading user (the instructor, who owns the courses) and root only. The scheduler listens
on 127.0.0.1 unless told otherwise, and its workers run as the grading user, never as
root, in a cgroup delegated to that user (cgroups.py makes each submission's group below it).
Dask's HTTP pages (dashboard, info, logs) are not served: they have no authentication.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from autograder.grader.sandbox import cgroups

CERTIFICATE, KEY = "cert.pem", "key.pem"
ADDRESS = "scheduler"  # the running scheduler's address, for the formgrader's Autograde
REPO = Path(__file__).resolve().parents[2]


def certificate_folder(classroom: Path) -> Path:
    return classroom / "cluster"


def make_certificate(folder: Path, owner: pwd.struct_passwd) -> None:
    """A self-signed certificate and its key in ``folder`` (kept when they exist), which only
    ``owner`` (and root) may enter."""
    from distributed.security import Security

    folder.mkdir(mode=0o700, exist_ok=True)
    os.chown(folder, owner.pw_uid, owner.pw_gid)
    os.chmod(folder, 0o700)
    if not (folder / KEY).is_file() or not (folder / CERTIFICATE).is_file():
        made = Security.temporary()
        for name, text in ((KEY, made.tls_client_key), (CERTIFICATE, made.tls_client_cert)):
            path = folder / name
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with open(descriptor, "w", encoding="ascii") as file:
                file.write(text)
    for name in (KEY, CERTIFICATE):
        os.chown(folder / name, owner.pw_uid, owner.pw_gid)
        os.chmod(folder / name, 0o600)


def security(folder: Path):
    """distributed's Security for every role (scheduler, worker, client) from ``folder``."""
    from distributed.security import Security

    certificate, key = str(folder / CERTIFICATE), str(folder / KEY)
    roles = ("client", "scheduler", "worker")
    pairs = (("cert", certificate), ("key", key))
    files = {f"tls_{role}_{kind}": path for role in roles for kind, path in pairs}
    return Security(require_encryption=True, tls_ca_file=certificate, **files)


@dataclass(frozen=True)
class Delegation:
    """Cgroup folders made for the cluster and given to the grading user; where we were."""

    # v2: the delegated folder and the leaf the cluster runs in; v1: one per controller
    folders: tuple[str, ...]
    joined: tuple[str, ...]  # the cgroup.procs files this process moved into
    left: tuple[str, ...]  # the cgroup.procs files it came from

    def undo(self) -> None:
        """Move back, end what is left inside, remove the folders (deepest first)."""
        for procs in self.left:
            with contextlib.suppress(OSError):
                Path(procs).write_text(str(os.getpid()))
        for folder in sorted(self.folders, key=len, reverse=True):
            for child in sorted(Path(folder).iterdir()):
                if child.is_dir():
                    cgroups.Cgroup((str(child),)).kill_and_remove()
            cgroups.Cgroup((folder,)).kill_and_remove()


_V2_FILES = ("cgroup.procs", "cgroup.subtree_control", "cgroup.threads")


def delegate(owner: pwd.struct_passwd) -> Delegation | str:
    """As root: a cgroup subtree with the memory and pids controllers that ``owner`` may make
    groups in, with this process moved inside (children inherit it); or why there is none."""
    parent = cgroups.find_parent()
    if isinstance(parent, str):
        return parent
    name = f"course-cluster-{uuid.uuid4().hex[:8]}"
    own = cgroups._own_cgroups()
    mounts = cgroups._mounts()
    if parent.version == 2:
        top = Path(parent.folders[0]) / name
        leaf = top / "cluster"
        top.mkdir()
        (top / "cgroup.subtree_control").write_text("+memory +pids")
        leaf.mkdir()
        for folder in (top, leaf):
            os.chown(folder, owner.pw_uid, owner.pw_gid)
            for file in _V2_FILES:
                if (folder / file).exists():
                    os.chown(folder / file, owner.pw_uid, owner.pw_gid)
        came_from = Path(mounts["cgroup2"]) / own["0"].lstrip("/") / "cgroup.procs"
        folders = (str(top), str(leaf))
        joined, left = (str(leaf / "cgroup.procs"),), (str(came_from),)
    else:
        made = []
        for below in parent.folders:  # memory, then pids
            folder = Path(below) / name
            folder.mkdir()
            made.append(folder)
            os.chown(folder, owner.pw_uid, owner.pw_gid)
            for file in ("cgroup.procs", "tasks"):
                os.chown(folder / file, owner.pw_uid, owner.pw_gid)
        folders = tuple(map(str, made))
        joined = tuple(str(folder / "cgroup.procs") for folder in made)
        left = tuple(str(Path(below) / "cgroup.procs") for below in parent.folders)
    for procs in joined:
        Path(procs).write_text(str(os.getpid()))
    return Delegation(folders, joined, left)


# Dask's HTTP pages (dashboard, scheduler and worker info, logs, task and stack pages,
# metrics, health) answer anyone who can reach the port, without authentication: none is
# served. Dask still opens its HTTP listener: on the scheduler's host, a port the system picks.
NO_HTTP = {"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}
_NO_HTTP_ENV = {
    "DASK_DISTRIBUTED__SCHEDULER__HTTP__ROUTES": "[]",
    "DASK_DISTRIBUTED__WORKER__HTTP__ROUTES": "[]",
}


def _serve(folder: Path, workers: int, host: str, port: int) -> int:
    """The scheduler and its workers, in this process (as the grading user)."""
    import dask
    from distributed import LocalCluster

    os.environ.update(_NO_HTTP_ENV)  # for the worker processes, whichever way they start
    with (
        dask.config.set(NO_HTTP),
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host=host,
            scheduler_port=port,
            dashboard_address=f"{host}:0",  # no fixed port (Dask's default is 8787) ...
            scheduler_kwargs={"dashboard": False},  # ... and no dashboard on it
            protocol="tls",
            security=security(folder),
        ) as cluster,
    ):
        address = cluster.scheduler_address
        (folder / ADDRESS).write_text(address + "\n", encoding="ascii")
        print(f"Dask scheduler at {address} with {workers} workers", flush=True)
        print(f"Grade through it: course-grade grade COURSE LESSON --scheduler {address} ", end="")
        print(f"--tls {folder}", flush=True)
        print("Stop it with Ctrl-C.", flush=True)
        stop = []
        signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
        try:
            while not stop:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
        finally:
            (folder / ADDRESS).unlink(missing_ok=True)
    return 0


def run(classroom: Path, workers: int, host: str, port: int) -> int:
    """``course-classroom cluster``: as root, start the cluster as the classroom's grading user."""
    settings = json.loads((classroom / "classroom.json").read_text(encoding="utf-8"))
    folder = certificate_folder(classroom)
    if os.geteuid() != 0:
        return _serve(folder, workers, host, port)
    grader = pwd.getpwnam(settings["instructor"])
    make_certificate(folder, grader)
    delegation = delegate(grader)
    if isinstance(delegation, str):
        print(f"course-classroom: no cgroup to grade in: {delegation}", file=sys.stderr)
        return 2
    argv = [settings["python"], "-m", "autograder.classroom.cluster", str(folder)]
    argv += [str(workers), host, str(port)]
    environment = {
        "HOME": grader.pw_dir,
        "USER": grader.pw_name,
        "PATH": os.pathsep.join([str(Path(settings["python"]).parent), "/usr/bin", "/bin"]),
        "PYTHONPATH": settings.get("course", str(REPO)),  # bound where users reach it
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    try:
        server = subprocess.Popen(
            argv,
            cwd=grader.pw_dir,
            user=grader.pw_uid,
            group=grader.pw_gid,
            extra_groups=[],
            env=environment,
        )
        forward = lambda number, _frame: server.send_signal(signal.SIGTERM)  # noqa: E731
        signal.signal(signal.SIGTERM, forward)
        signal.signal(signal.SIGINT, forward)
        return server.wait()
    finally:
        delegation.undo()


if __name__ == "__main__":  # the grading user's side of run()
    where, count, address, number = sys.argv[1:]
    sys.exit(_serve(Path(where), int(count), address, int(number)))
