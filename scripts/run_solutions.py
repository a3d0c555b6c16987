"""Execute every lesson's solution notebook in both languages and report time and errors.

Used by `make gpu-check` (with COURSE_DEVICE=cuda, several at once) and to measure how long a
lesson takes (one at a time). Exits non-zero when any cell of a solution notebook raises.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from nbclient import NotebookClient

from autograder import bilingual, course
from autograder.common.i18n import LANGUAGES

REPO = Path(__file__).resolve().parent.parent


def run_one(source: Path, lang: str) -> tuple[bool, list[str]]:
    """One solution notebook in one language: whether it ran clean, and what to print."""
    device = os.environ.get("COURSE_DEVICE", "(default)")
    nb = bilingual.split(bilingual.read(source), lang)
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=True, shutdown_kernel="immediate"
    )
    with client.setup_kernel():
        started = time.perf_counter()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        elapsed = time.perf_counter() - started
    errors = [
        f"  cell {cell.get('id')}: {out.ename}: {out.evalue[:200]}"
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.output_type == "error"
    ]
    status = "ok" if not errors else "ERRORS"
    timing = f"{elapsed:.1f} s (cells only, kernel start excluded)"
    head = f"{source.parent.name} [{lang}] on {device}: {timing} {status}"
    return not errors, [head, *errors]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="notebooks run at once (default 1)")
    jobs = parser.parse_args().jobs
    runs = [(s, lang) for s in course.lesson_sources(REPO / "solutions") for lang in LANGUAGES]
    with ProcessPoolExecutor(max_workers=jobs) as pool:  # timings are honest only with 1
        results = pool.map(run_one, [s for s, _ in runs], [lang for _, lang in runs])
        failures = 0
        for ok, lines in results:
            failures += not ok
            print("\n".join(lines), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
