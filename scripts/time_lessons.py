"""How long a learner waits: each learner notebook as JupyterLab's Run All would run it.

For every notebook in notebooks/<lang>/ it starts a fresh kernel and measures
the time from the kernel's start to the end of the setup cell (the first output
a learner sees after opening a lesson and running it), and the time of Run All
(every cell, the unanswered exercises' failing tests included, to the
self-check). Prints a Markdown table for the README:

    .venv/bin/python scripts/time_lessons.py [--lang en]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent


def time_notebook(path: Path) -> tuple[float, float]:
    """(seconds to the setup cell's output, seconds of Run All), both from kernel start."""
    nb = nbformat.read(str(path), as_version=4)
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=True, shutdown_kernel="immediate"
    )
    started = time.perf_counter()
    first_output = None
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
            if first_output is None and cell.cell_type == "code":
                first_output = time.perf_counter() - started
    return first_output or 0.0, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default="en", choices=("en", "zh"))
    args = parser.parse_args()
    print("| Lesson | setup cell's output | Run All |")
    print("|---|---|---|")
    for path in sorted((REPO / "notebooks" / args.lang).glob("*.ipynb")):
        first, total = time_notebook(path)
        print(f"| {path.stem} | {first:.1f} s | {total:.1f} s |", flush=True)


if __name__ == "__main__":
    main()
