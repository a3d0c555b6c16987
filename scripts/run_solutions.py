"""Execute every lesson's solution notebook in both languages and report time and errors.

Used by `make gpu-check` (with COURSE_DEVICE=cuda) and to measure how long a lesson takes.
Exits non-zero when any cell of a solution notebook raises.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from nbclient import NotebookClient

from autograder import bilingual, course
from autograder.common.i18n import LANGUAGES

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    failures = 0
    device = os.environ.get("COURSE_DEVICE", "(default)")
    for source in course.lesson_sources(REPO / "solutions"):
        for lang in LANGUAGES:
            nb = bilingual.split(bilingual.read(source), lang)
            client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True)
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
            failures += bool(errors)
            status = "ok" if not errors else "ERRORS"
            print(
                f"{source.parent.name} [{lang}] on {device}: {elapsed:.1f} s "
                f"(cells only, kernel start excluded) {status}"
            )
            for line in errors:
                print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
