"""A kernel manager that starts each kernel inside the sandbox, in the submission's cgroup.

The kernel talks over Unix sockets (IPC transport) in a host folder private to
this submission's kernels, so it needs no network at all; inside the sandbox
that folder only takes sockets, and the kernel writes only to its scratch.
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Any, Integer, Unicode

from autograder.grader.sandbox import SCRATCH, sandbox_argv


class SandboxedKernelManager(AsyncKernelManager):
    """Start the kernel as ``launcher (cgroup, rlimits) -> bubblewrap -> Landlock -> kernel``."""

    workdir = Unicode(help="Host folder for the connection file and sockets, private.").tag(
        config=True
    )
    confinement = Any(help="The autograder.grader.sandbox.Confinement of this submission.")
    threads = Integer(0, help="CPU threads a kernel's torch may use (0: torch's default).").tag(
        config=True
    )
    feedback_language = Unicode("", help="Language of the checks' feedback (course's).").tag(
        config=True
    )

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        work = Path(self.workdir)
        work.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.transport = "ipc"
        self.ip = str(work / "kernel")
        self.connection_file = str(work / "kernel.json")

    def kernel_env(self, scratch: str = SCRATCH) -> dict[str, str]:
        """What the kernel's environment holds besides the sandbox's minimal one."""
        env = {
            "IPYTHONDIR": f"{scratch}/.ipython",
            "MPLCONFIGDIR": f"{scratch}/.matplotlib",
            "MPLBACKEND": "Agg",
        }
        env.update({k: v for k, v in os.environ.items() if k.startswith("COURSE_")})
        if self.threads:
            env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(self.threads)
        if self.feedback_language:
            env["COURSE_GRADING_LANG"] = self.feedback_language
        return env

    def format_kernel_cmd(self, extra_arguments=None):
        command = super().format_kernel_cmd(extra_arguments)
        return sandbox_argv(
            command, Path(self.workdir), self.confinement, env=self.kernel_env(), sockets=True
        )

    async def _async_pre_start_kernel(self, **kwargs):
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kwargs)
        uid = self.confinement.uid if self.confinement.bubblewrap else None
        if uid is not None:  # the kernel runs as this user: its folder and file are its own
            for path in (self.workdir, self.connection_file):
                os.chown(path, uid, uid)
        env = dict(kw.get("env") or os.environ)
        if self.confinement.bubblewrap:
            env = {"PATH": env.get("PATH", os.defpath)}  # bwrap clears it anyway
        else:
            env.update(self.kernel_env(self.workdir), HOME=self.workdir)
            env.pop("JPY_PARENT_PID", None)
        kw["env"] = env
        kw["cwd"] = self.workdir
        return kernel_cmd, kw
