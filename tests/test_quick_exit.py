"""`course-grade` leaves without the interpreter's teardown, and loses nothing by it."""

from __future__ import annotations

import subprocess
import sys

import pytest

LEAVES = """
import atexit, sys, threading, time
from autograder.grader.quick_exit import exit_now
atexit.register(lambda: print("exit handler ran", flush=True))
late = threading.Thread(target=lambda: (time.sleep(0.2), print("thread done,", end="")))
late.start()  # not a daemon: exit_now waits for it, as the interpreter does
print("written", end="")  # unflushed: exit_now must flush it
print("to stderr", end="", file=sys.stderr)
exit_now({status})
print("never")
"""


@pytest.mark.parametrize("status", [0, 1, 3, None])
def test_exit_now_keeps_the_status_the_output_the_threads_and_the_exit_handlers(status):
    result = subprocess.run(
        [sys.executable, "-c", LEAVES.format(status=status)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == (status or 0)
    assert result.stdout == "writtenthread done,exit handler ran\n"
    assert result.stderr == "to stderr"


def test_the_installed_command_leaves_through_it():
    from importlib.metadata import entry_points

    (command,) = entry_points(group="console_scripts", name="course-grade")
    assert command.value == "autograder.grader.cli:entry"
