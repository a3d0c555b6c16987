"""When a graded kernel counts as ready (autograder/grader/sandbox/kernel.py, ``ReadyOnReply``).

A kernel is ready once it has answered ``kernel_info`` on the shell channel and said "idle" on
iopub, which shows that this client's subscription reaches it. iopub drops what the kernel
published before the subscription arrived, so the client asks again, soon at first and then
less often, and an "idle" for an earlier question counts as well as one for the latest.
Channels here are stand-ins that answer as a kernel would, the first "idle" lost or late.
"""

from __future__ import annotations

import asyncio
from queue import Empty

from autograder.grader.sandbox import kernel


class Channel:
    """Messages delivered in order; ``get_msg`` records each timeout it was given."""

    def __init__(self):
        self.waiting: list[dict] = []
        self.timeouts: list[float] = []

    async def get_msg(self, timeout: float) -> dict:
        self.timeouts.append(timeout)
        if not self.waiting:
            raise Empty
        return self.waiting.pop(0)


class Kernel(kernel.ReadyOnReply):
    """The client, its channels stand-ins: every question answered on shell; on iopub the
    statuses of the questions from ``heard_from`` on (earlier ones were published before the
    subscription), and with ``late`` the first question's only after the second is asked."""

    def __init__(self, heard_from: int = 0, late: bool = False):
        self.shell, self.iopub = Channel(), Channel()
        self.questions: list[str] = []
        self.heard_from, self.late = heard_from, late
        self.handled = None

    @property
    def shell_channel(self):
        return self.shell

    @property
    def iopub_channel(self):
        return self.iopub

    def kernel_info(self) -> str:
        question = f"q{len(self.questions)}"
        self.questions.append(question)
        self.shell.waiting.append({"parent_header": {"msg_id": question}, "content": {}})
        statuses = [question] if len(self.questions) > self.heard_from else []
        if self.late:
            statuses = [] if len(self.questions) == 1 else ["q0"]
        for asked in statuses:
            for state in ("busy", "idle"):
                status = {"execution_state": state}
                self.iopub.waiting.append({"parent_header": {"msg_id": asked}, "content": status})
        return question

    def _handle_kernel_info_reply(self, msg) -> None:
        self.handled = msg

    async def _async_is_alive(self) -> bool:
        return True


def test_a_kernel_heard_at_once_is_ready_after_one_question():
    ready = Kernel()
    asyncio.run(ready.wait_for_ready(timeout=5))
    assert ready.questions == ["q0"] and ready.handled is not None


def test_a_lost_idle_is_asked_again_soon_then_less_often():
    ready = Kernel(heard_from=3)
    asyncio.run(ready.wait_for_ready(timeout=5))
    assert ready.questions == ["q0", "q1", "q2", "q3"]
    # the iopub waits of the three unheard questions: each longer than the one before,
    # the first a tenth of jupyter_client's fixed 0.2 s
    unheard = [t for t in ready.iopub.timeouts if t > 0][:3]
    assert len(unheard) == 3 and unheard == sorted(unheard), ready.iopub.timeouts
    assert unheard[0] <= kernel.IOPUB_WAITS_S[0] and unheard[-1] <= kernel.IOPUB_WAITS_S[2]


def test_an_idle_for_an_earlier_question_counts():
    ready = Kernel(late=True)
    asyncio.run(ready.wait_for_ready(timeout=5))
    assert ready.questions == ["q0", "q1"] and ready.handled is not None
