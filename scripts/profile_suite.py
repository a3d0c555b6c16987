"""Where the test suite's CPU goes: each test file's wall time and the machine's busy core-s.

`make test` is bound by the CPU (both cores busy nearly all the time), so it gets faster only
by doing less work, and the work to cut is where the CPU goes, which per-file times under
pytest-xdist do not say: two files share the cores, and a file that grades a class keeps
two cores busy through its `course-grade` workers while one that waits on a timer keeps
none. This runs the suite in one process (``-n 0``), one file after another, and reads the
busy time of the whole machine (/proc/stat) from each file's first test to the next file's:
its own CPU and that of everything it started. Run it on a quiet machine.

    .venv/bin/python scripts/profile_suite.py                 # the whole suite
    .venv/bin/python scripts/profile_suite.py -m "not slow"   # arguments go to pytest
    .venv/bin/python scripts/profile_suite.py --processes     # and the CPU by program

``--processes`` also samples every process while the suite runs and prints the CPU by
program (process_cpu.py): which of a file's processes spent it.

Used as a pytest plugin (``-p profile_suite``), it appends one JSON line per file to
$SUITE_PROFILE_OUT.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import process_cpu  # scripts beside this one
from load_validate import busy_cpu_s

REPO = Path(__file__).resolve().parent.parent
_current: dict = {}


def _close_file() -> None:
    if not _current:
        return
    line = {
        "file": _current["file"],
        "tests": _current["tests"],
        "wall_s": round(time.monotonic() - _current["started"], 2),
        "busy_s": round(busy_cpu_s() - _current["busy"], 2),
    }
    with open(os.environ["SUITE_PROFILE_OUT"], "a") as out:
        out.write(json.dumps(line) + "\n")


def pytest_runtest_protocol(item, nextitem):
    """At a file's first test, close the previous file (its module fixtures are torn down
    by then: pytest ends them with the file's last test)."""
    if _current.get("file") != item.path.name:
        _close_file()
        _current.update(file=item.path.name, tests=0, started=time.monotonic(), busy=busy_cpu_s())
    _current["tests"] += 1


def pytest_sessionfinish(session):
    _close_file()


def table(rows: list[dict]) -> str:
    """Files by busy core-s, most first, with their share of the whole."""
    total = sum(row["busy_s"] for row in rows) or 1.0
    lines = [f"{'file':40s} {'tests':>6s} {'wall s':>8s} {'core-s':>8s} {'share':>6s}"]
    for row in sorted(rows, key=lambda row: -row["busy_s"]):
        share = 100 * row["busy_s"] / total
        lines.append(
            f"{row['file']:40s} {row['tests']:6d} {row['wall_s']:8.1f} "
            f"{row['busy_s']:8.1f} {share:5.1f}%"
        )
    wall = sum(row["wall_s"] for row in rows)
    lines.append(f"{'all':40s} {sum(r['tests'] for r in rows):6d} {wall:8.1f} {total:8.1f}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    by_program = "--processes" in argv
    argv = [arg for arg in argv if arg != "--processes"]
    sampler = process_cpu.ProcessSampler().start() if by_program else None
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "profile.jsonl"
        out.touch()
        env = dict(
            os.environ,
            SUITE_PROFILE_OUT=str(out),
            PYTHONPATH=os.pathsep.join(
                filter(None, [str(REPO / "scripts"), os.environ.get("PYTHONPATH")])
            ),
        )
        command = [sys.executable, "-m", "pytest", "-n", "0", "-p", "profile_suite", "-q", *argv]
        status = subprocess.run(command, cwd=REPO, env=env, check=False).returncode
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    print(table(rows))
    if sampler is not None:
        print()
        print(process_cpu.table(sampler.stop()))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
