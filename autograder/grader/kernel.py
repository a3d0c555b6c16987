"""A kernel manager that starts each kernel inside the sandbox, under the limits.

The kernel talks over Unix sockets (IPC transport) in its working directory, so
it needs no network at all; its working directory is the only place it can write.
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Any, Integer, Unicode

from autograder.grader.limits import Limits


class SandboxedKernelManager(AsyncKernelManager):
    """Start the kernel as ``launcher (limits) -> sandbox -> kernel``."""

    workdir = Unicode(help="The only directory the kernel may write; its cwd.").tag(config=True)
    sandbox = Any(help="The autograder.grader.sandbox.Sandbox to wrap kernels in.")
    limits = Any(Limits(), help="The autograder.grader.limits.Limits of each kernel.")
    pids_cgroup = Unicode("", help="pids cgroup the kernel joins, if any.").tag(config=True)
    threads = Integer(0, help="CPU threads a kernel's torch may use (0: torch's default).").tag(
        config=True
    )
    feedback_language = Unicode("", help="Language of the checks' feedback (course's).").tag(
        config=True
    )

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        work = Path(self.workdir)
        work.mkdir(parents=True, exist_ok=True)
        self.transport = "ipc"
        self.ip = str(work / "kernel")
        self.connection_file = str(work / "kernel.json")

    def format_kernel_cmd(self, extra_arguments=None):
        command = super().format_kernel_cmd(extra_arguments)
        isolated = self.sandbox.wrap(command, Path(self.workdir))
        return self.limits.launcher_argv(self.pids_cgroup) + isolated

    async def _async_pre_start_kernel(self, **kwargs):
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kwargs)
        env = dict(kw.get("env") or os.environ)
        env.update(
            HOME=self.workdir,
            IPYTHONDIR=str(Path(self.workdir) / ".ipython"),
            MPLCONFIGDIR=str(Path(self.workdir) / ".matplotlib"),
            MPLBACKEND="Agg",
        )
        if self.threads:
            env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(self.threads)
        if self.feedback_language:
            env["COURSE_GRADING_LANG"] = self.feedback_language
        env.pop("JPY_PARENT_PID", None)
        kw["env"] = env
        kw["cwd"] = self.workdir
        return kernel_cmd, kw
