"""A test cell's visible and hidden parts, run in order, the hidden ones salted.

While grading, the hidden tests' seeds are moved by the submission's salt (see
``protocol.salted``); the visible tests keep theirs, so that what a learner saw
in the notebook is what the grader checks again. Observer and judge both run a
test cell through here, so they draw the same inputs and their keys match.
"""

from __future__ import annotations

from collections.abc import Callable

from autograder.common import protocol

BEGIN, END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"  # nbgrader's markers


def parts(source: str) -> list[tuple[str, bool]]:
    """The cell's pieces of code, in order, each with whether it is hidden. The markers
    stand at the cell's top level (as in every test cell of the course), so each piece
    compiles on its own."""
    pieces, lines, hidden = [], [], False
    for line in source.splitlines(keepends=True):
        if BEGIN in line or END in line:
            pieces.append(("".join(lines), hidden))
            lines, hidden = [], BEGIN in line
        else:
            lines.append(line)
    pieces.append(("".join(lines), hidden))
    return [(code, hidden) for code, hidden in pieces if code.strip()]


def run(source: str, salt: int, execute: Callable[[str], None]) -> None:
    """``execute`` each piece of the test cell, the hidden ones with ``salt`` in force."""
    try:
        for code, hidden in parts(source):
            protocol.MODE.salt = salt if hidden else 0
            execute(code)
    finally:
        protocol.MODE.salt = 0
