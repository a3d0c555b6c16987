"""A kernel manager whose kernels are confined children of the worker's zygote.

Instead of starting Python and importing torch for every kernel, the kernel is
forked from the zygote (``zygote.py``), placed in the submission's cgroup and
confined (``isolate.py``) before it runs a line of the notebook. It talks over
Unix sockets (IPC transport) in a folder of its own in the zygote's spool, so it
needs no network at all, and may write only to its scratch.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
import uuid
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from traitlets import Any, Integer, Type, Unicode

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


# How long a kernel that answered on the shell channel has to say "idle" on iopub before the
# question is asked again, for each question in turn (the last one repeats): iopub drops what
# the kernel published before this client's subscription reached it. In a fifth of the starts
# the first "idle" was dropped so, and a single wait of 0.2 s spent that fifth of a second.
IOPUB_WAITS_S = (0.02, 0.05, 0.1, 0.2)
ASK_AGAIN_S = 1.0  # a kernel_info request unanswered this long is sent again


class ReadyOnReply(AsyncKernelClient):
    """A client that knows its kernel is ready when the kernel has answered ``kernel_info``
    on the shell channel and then said "idle" on iopub for one of the questions asked.

    jupyter_client's own wait ends with iopub silent for 0.2 s: a fixed fifth of a second
    per graded notebook, waited on a timer. Here the kernel's own message ends the wait.
    """

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (math.inf if timeout is None else timeout)
        asked: set[str] = set()  # an "idle" for any of them shows that iopub reaches us
        while True:
            question = self.kernel_info()
            asked.add(question)
            until = min(deadline, time.monotonic() + ASK_AGAIN_S)
            reply = await _answer(self.shell_channel, {question}, until)
            if reply is not None:
                wait = IOPUB_WAITS_S[min(len(asked), len(IOPUB_WAITS_S)) - 1]
                if await _answer(self.iopub_channel, asked, time.monotonic() + wait, idle=True):
                    self._handle_kernel_info_reply(reply)
                    return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")


async def _answer(channel, asked: set[str], until: float, idle: bool = False) -> dict | None:
    """The channel's next message for one of the requests ``asked`` (with ``idle``: its
    "idle" status) before ``until``; others are passed over (nbclient reads only its own
    requests' too)."""
    while (left := until - time.monotonic()) > 0:
        try:
            msg = await channel.get_msg(timeout=left)
        except Empty:
            return None
        if msg["parent_header"].get("msg_id") not in asked:
            continue
        if not idle or msg["content"].get("execution_state") == "idle":
            return msg
    return None


async def _exited(process) -> None:
    """Until the zygote's child has exited: its pidfd becomes readable then."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    loop.add_reader(process.pidfd, lambda: done.done() or done.set_result(None))
    try:
        await done
    finally:
        loop.remove_reader(process.pidfd)


class SandboxedKernelManager(AsyncKernelManager):
    """Kernels forked from the zygote into the submission's cgroup, then confined."""

    client_factory = Type(ReadyOnReply)

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

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        """Until the kernel has exited, woken by its exit (jupyter_client polls every 0.1 s)."""
        process = getattr(self.provisioner, "process", None)
        if process is not None and process.poll() is None:
            await _exited(process)

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
