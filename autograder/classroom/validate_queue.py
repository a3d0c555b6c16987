"""Validate in the classroom: a few at a time per machine, outside the server's event loop.

nbgrader's Validate handler runs the whole notebook, in a new kernel, inside the learner's
server's event loop: until it is done, that server answers nothing else (JupyterLab's polls
wait). And a class pressing Validate together starts one kernel with torch per learner on
the same few cores: each notebook's cells stretch past the course's cell timeout and the
kernels' memory adds up. This server extension serves nbgrader's Validate with two
changes: it waits for one of ``SLOTS`` slots of the machine (one per core), taken in turn,
and it runs the validation in a thread, so the server keeps answering meanwhile.

A slot is an abstract Unix socket name bound by the server validating: machine-wide for
every user's server, and freed by the kernel when its holder ends, however it ends. A
learner's code could bind the names itself; a Validate then waits at most ``WAIT_AT_MOST_S``
for a slot and runs anyway, so squatting slows the class and never stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time

from jupyter_server.utils import url_path_join
from nbgrader.server_extensions.validate_assignment import handlers as nbgrader_validate
from tornado import web

SLOTS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
WAIT_AT_MOST_S = 1800  # below the classroom proxy's request timeout (hub_config.py)
RETRY_S = 0.5
_NAME = "\0autograd-course-validate-slot-{}"


def _take_slot() -> socket.socket | None:
    """A free slot (the socket holding its name), or None when all are taken."""
    for k in range(SLOTS):
        holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            holder.bind(_NAME.format(k))
            return holder
        except OSError:
            holder.close()
    return None


@contextlib.asynccontextmanager
async def machine_slot():
    """Hold one of the machine's slots while inside; wait (without blocking) for one."""
    deadline = time.monotonic() + WAIT_AT_MOST_S
    holder = _take_slot()
    while holder is None and time.monotonic() < deadline:
        await asyncio.sleep(RETRY_S)
        holder = _take_slot()
    try:
        yield
    finally:
        if holder is not None:
            holder.close()


class QueuedValidateHandler(nbgrader_validate.ValidateAssignmentHandler):
    """nbgrader's Validate, in turn with the machine's other Validates, in a thread."""

    @web.authenticated
    async def post(self):
        try:
            path = self.get_argument("path")
        except web.MissingArgumentError:
            path = self.get_json_body()["path"]
        async with machine_slot():
            loop = asyncio.get_running_loop()
            output = await loop.run_in_executor(None, self.validate_notebook, path)
        self.finish(json.dumps(output))


def _jupyter_server_extension_points():
    return [{"module": "autograder.classroom.validate_queue"}]


def _load_jupyter_server_extension(serverapp):
    """The routes of nbgrader's validate extension, Validate served by the handler above."""
    webapp = serverapp.web_app
    webapp.settings["root_dir"] = serverapp.root_dir
    routes = [
        ("/assignments/validate", QueuedValidateHandler),
        ("/nbgrader_version", nbgrader_validate.NbGraderVersionHandler),
    ]
    base = webapp.settings["base_url"]
    webapp.add_handlers(".*$", [(url_path_join(base, route), handler) for route, handler in routes])
