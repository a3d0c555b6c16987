"""A kernel manager whose kernels are confined children of the worker's zygote.

Instead of starting Python and importing torch for every kernel, the kernel is
forked from the zygote (``zygote.py``), placed in the submission's cgroup and
confined (``isolate.py``) before it runs a line of the notebook. It talks over
Unix sockets (IPC transport) in a folder of its own in the zygote's spool, so it
needs no network at all, and may write only to its scratch.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from traitlets import Any, Integer, Unicode

from autograder.grader.sandbox.bwrap import learner_environment, learner_scratch


class ForkedProvisioner(LocalProvisioner):
    """Launch the kernel by asking the zygote for a child; the rest is ``LocalProvisioner``'s."""

    async def launch_kernel(self, cmd: list[str], **kwargs) -> dict:
        km = self.parent
        confinement = km.confinement
        self.process = km.zygote.fork(
            "kernel",
            confinement.cgroup,
            km.kernel_env(),
            sockets=Path(km.workdir),
            cwd=learner_scratch(confinement, km.workdir),
            connection_file=km.connection_file,
            threads=km.threads,
        )
        self.pid, self.pgid = self.process.pid, None
        self.cwd = km.workdir
        return self.connection_info


class SandboxedKernelManager(AsyncKernelManager):
    """Kernels forked from the zygote into the submission's cgroup, then confined."""

    workdir = Unicode(help="Folder for the connection file and sockets, in the zygote's spool.")
    confinement = Any(help="The autograder.grader.sandbox.bwrap.Confinement of this submission.")
    zygote = Any(help="The worker's autograder.grader.sandbox.forked.Zygote.")
    threads = Integer(0, help="CPU threads a kernel's torch may use (0: torch's default).")
    feedback_language = Unicode("", help="Language of the checks' feedback (course's).")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        work = Path(self.workdir)
        work.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.transport = "ipc"
        self.ip = str(work / "kernel")
        self.connection_file = str(work / "kernel.json")

    def kernel_env(self) -> dict[str, str]:
        """The kernel's whole environment, as a sandboxed process gets it; the self-check
        does not run the checks again in it (``kernel/selfcheck.py``)."""
        language = {"COURSE_GRADING_LANG": self.feedback_language} if self.feedback_language else {}
        return learner_environment(
            self.confinement, self.workdir, self.threads, **language, COURSE_GRADING="1"
        )

    async def _async_pre_start_kernel(self, **kwargs):
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or kwargs.pop("kernel_id", str(uuid.uuid4()))
            self.provisioner = ForkedProvisioner(
                kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self
            )
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kwargs)
        uid = self.confinement.uid if self.confinement.bubblewrap else None
        if uid is not None:  # the kernel runs as this user: its folder and file are its own
            for path in (self.workdir, self.connection_file):
                os.chown(path, uid, uid)
        return kernel_cmd, kw
