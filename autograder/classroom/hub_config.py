"""The classroom's ``jupyterhub_config.py``: who logs in, how servers start, where they listen."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.classroom import hub_api

_TEMPLATE = '''\
# JupyterHub configuration of the autograd course's classroom; written by course-classroom setup.
# Run it with `course-classroom start {folder}` (or `jupyterhub -f` this file, from {hub}).
import os

c = get_config()  # noqa: F821

c.JupyterHub.ip = {ip!r}
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
# The pure-Python configurable-http-proxy, able to hold a class's requests at once
# (autograder/classroom/proxy.py). Validate runs a whole lesson, after the Validates
# ahead of it (validate_queue.py): a request may take up to an hour, not 20 s.
c.ConfigurableHTTPProxy.command = [
    {proxy!r}, "-m", "autograder.classroom.proxy", "--proxy-timeout", "3600000"
]
c.ConfigurableHTTPProxy.pid_file = {proxy_pid!r}
c.JupyterHub.db_url = "sqlite:///{hub}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{hub}/jupyterhub_cookie_secret"

# Who may log in: each person with their own account's password (PAM), the ones setup gave
# out listed in {passwords} (root only). An institution's log-in: see the README.
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_users = set({allowed!r})
c.Authenticator.admin_users = {{{instructor!r}}}
# Learners added later join the running hub through its REST API, no restart: setup, as
# root, uses this service's token (a root-only file), whose one scope lets it create users
# and nothing more: no servers, no tokens, no admins (autograder/classroom/hub_api.py).
# Without the token file the hub has no such service: added learners wait for a restart.
if os.path.isfile({roster_token!r}):
    with open({roster_token!r}, encoding="ascii") as _token:
        c.JupyterHub.services = [{{"name": {roster!r}, "api_token": _token.read().strip()}}]
    c.JupyterHub.load_roles = [
        {{"name": {roster!r}, "scopes": {roster_scopes!r}, "services": [{roster!r}]}}
    ]

# Each person's JupyterLab runs as their own Unix user, in their private home, in a cgroup
# of its own: at most this much memory (kernels, terminals and /tmp included) and this many
# processes and threads, all together (autograder/classroom/spawner.py). Change them here.
c.JupyterHub.spawner_class = "autograder.classroom.spawner.BoundedSpawner"
c.Spawner.mem_limit = {mem_limit!r}
c.BoundedSpawner.processes = {processes}
# A learner's server gets at most this many cores' time (a cgroup cpu quota; None: no
# limit); the instructor's is not capped, so that grading in their terminal uses every core.
LEARNER_CPU_LIMIT = {cpus!r}
# A learner whose home has a fixed size (setup --home-mb, autograder/classroom/disks.py)
# gets it mounted again, if a reboot ended it, before their server starts.
c.BoundedSpawner.classroom = {folder_text!r}
SERVER = [{python!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.cmd = SERVER
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
# The instructor's default server grades the English course; a server named "zh" the Chinese.
c.JupyterHub.allow_named_servers = True
INSTRUCTORS = {{{instructor!r}}}


def jupyter_config_path(spawner):
    """The instructor's Lab gets the formgrader; learners' Labs the Assignments panel."""
    role = "instructor" if spawner.user.name in INSTRUCTORS else "learner"
    return {config_root!r} + "/classroom-" + role + ":" + {env!r} + "/etc/jupyter"


def own_processes_only(spawner):
    """A learner's server sees its own processes only: in PID and user namespaces of its
    own, with its own /proc, and its own /tmp of at most {tmp_mb} MiB
    (autograder/classroom/own_pids.py; where the machine refuses them, the server runs as
    it is and says so in its log)."""
    wrapper = [{python!r}, "-m", "autograder.classroom.own_pids", "--tmp-mb", "{tmp_mb}", "--"]
    instructor = spawner.user.name in INSTRUCTORS
    spawner.cmd = SERVER if instructor else wrapper + SERVER
    spawner.cpu_limit = None if instructor else LEARNER_CPU_LIMIT


c.Spawner.pre_spawn_hook = own_processes_only


def torch_compile_cache(spawner):
    """torch.compile's cache in the person's home, not /tmp/torchinductor_USER, which
    would outlive their account (and be inherited by a later user with the same uid)."""
    import pwd

    return pwd.getpwnam(spawner.user.name).pw_dir + "/.cache/torchinductor"


# The course environment's Jupyter files (JupyterLab, its extensions), also when users
# run it through a bridging venv (course-classroom setup --python); its commands first
# on PATH (nbgrader, course-grade: see setup --python).
c.Spawner.environment = {{
    "JUPYTER_CONFIG_PATH": jupyter_config_path,
    "JUPYTER_PATH": {env!r} + "/share/jupyter",
    "JUPYTERLAB_DIR": {env!r} + "/share/jupyter/lab",
    "PATH": {path!r},
    "TORCHINDUCTOR_CACHE_DIR": torch_compile_cache,
    # The formgrader's Autograde finds the classroom's grading cluster here (formgrader.py).
    "COURSE_CLASSROOM": {folder_text!r},
}}
'''


@dataclass(frozen=True)
class Limits:
    """What one person's server may use, all its processes together."""

    memory: str = "4G"  # JupyterHub's mem_limit: a number of bytes, or with K, M, G, T
    processes: int = 1024  # processes and threads (pids.max): torch starts a thread per core
    tmp_mb: int = 1024  # a learner's own /tmp (a tmpfs: counted in memory)
    home_mb: int = 0  # a learner's home of a fixed size (disks.py); 0: homes share the disk
    cpus: float = 1.0  # cores' time per learner's server (a cpu quota); 0: no limit


@dataclass(frozen=True)
class Listen:
    """Where the hub listens (``ip``:``port``) and its two loopback-only internal ports."""

    ip: str = "127.0.0.1"
    port: int = 8000
    hub_port: int = 8081
    proxy_api_port: int = 8001


def render(
    folder: Path,
    listen: Listen,
    bin_dir: Path,
    python: Path,
    config_root: Path,
    instructor: str,
    learners: list[str],
    limits: Limits = Limits(),
) -> str:
    """The configuration text.

    ``python`` is the interpreter users' servers run (see interpreter.py), ``bin_dir`` the
    course environment's commands (the hub's proxy among them).
    """
    hub = folder / "hub"
    return _TEMPLATE.format(
        folder=folder,
        folder_text=str(folder),
        hub=hub,
        ip=listen.ip,
        port=listen.port,
        hub_port=listen.hub_port,
        proxy_api_port=listen.proxy_api_port,
        proxy=str(bin_dir / "python"),
        proxy_pid=str(hub / "jupyterhub-proxy.pid"),
        passwords=folder / "passwords.csv",
        allowed=sorted({instructor, *learners}),
        roster_token=str(hub_api.token_path(folder)),
        roster=hub_api.SERVICE,
        roster_scopes=list(hub_api.SCOPES),
        instructor=instructor,
        python=str(python),
        mem_limit=limits.memory,
        processes=limits.processes,
        tmp_mb=limits.tmp_mb,
        cpus=limits.cpus or None,
        config_root=str(config_root),
        env=str(bin_dir.parent),
        path=os.pathsep.join([str(python.parent), str(bin_dir), "/usr/local/bin:/usr/bin:/bin"]),
    )
