"""Leave a finished command without tearing the interpreter down.

A process that has imported torch, ``torch._dynamo`` and nbgrader spends about a second of
CPU after its last statement in Python's own finalization (clearing every module and
freeing each object one by one; measured on the 2-core machine: 3.3 s for importing them
and exiting, 2.2 s when the process leaves with ``os._exit``). A command-line run of
``course-grade`` has written and closed everything by then, so that second is only a wait
before the instructor's prompt, or before the next step of a script, comes back.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from typing import NoReturn


def exit_now(status: int | None) -> NoReturn:
    """What ``sys.exit(status)`` does for a finished command, less the interpreter's teardown:
    threads that are not daemons are waited for, the exit handlers still run
    (multiprocessing's finalizers among them: they end the run's zygote), logging and the
    standard streams are flushed, the status is kept."""
    code = status if isinstance(status, int) else 0
    try:
        # CPython's own two first steps at shutdown, in its order; no public API does either.
        threading._shutdown()
        atexit._run_exitfuncs()
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except BaseException:  # a handler that fails must not hide the run's status
        code = code or 1
    os._exit(code)
