"""scripts/profile_suite.py: one line per test file, the busy CPU counted to the file that
ran then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import process_cpu  # noqa: E402
import profile_suite  # noqa: E402

BUSY = (
    "import time\n\ndef test_busy():\n    start = time.process_time()\n"
    "    while time.process_time() - start < 0.5:\n        pass\n"
)
# 0.6 s of one core, in a process of its own, which then waits: sampled after its last CPU
BURN = (
    "import time\nstart = time.process_time()\n"
    "while time.process_time() - start < 0.6:\n    pass\ntime.sleep(0.5)"
)
IDLE = "import time\n\ndef test_idle():\n    time.sleep(0.5)\n\ndef test_too():\n    pass\n"


def test_each_file_gets_its_own_wall_time_and_busy_cpu(tmp_path):
    (tmp_path / "test_a_busy.py").write_text(BUSY)
    (tmp_path / "test_b_idle.py").write_text(IDLE)
    out = tmp_path / "profile.jsonl"
    env = dict(os.environ, SUITE_PROFILE_OUT=str(out), PYTHONPATH=str(REPO / "scripts"))
    command = [sys.executable, "-m", "pytest", "-p", "profile_suite", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, "-q", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {row["file"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert set(rows) == {"test_a_busy.py", "test_b_idle.py"}
    assert rows["test_a_busy.py"]["tests"] == 1 and rows["test_b_idle.py"]["tests"] == 2
    assert rows["test_b_idle.py"]["wall_s"] >= 0.5
    # a lower bound only: the machine's other work (another pytest worker) adds to both
    assert rows["test_a_busy.py"]["busy_s"] >= 0.45


def test_the_table_puts_the_costliest_file_first_and_adds_them_up():
    rows = [
        {"file": "test_small.py", "tests": 3, "wall_s": 1.0, "busy_s": 1.0},
        {"file": "test_big.py", "tests": 1, "wall_s": 2.0, "busy_s": 3.0},
    ]
    lines = profile_suite.table(rows).splitlines()
    assert lines[1].startswith("test_big.py") and "75.0%" in lines[1]
    assert lines[2].startswith("test_small.py")
    assert lines[-1].split() == ["all", "4", "3.0", "4.0"]


def test_a_program_gets_the_cpu_it_spent_while_sampled():
    sampler = process_cpu.ProcessSampler(interval_s=0.05).start()
    subprocess.run([sys.executable, "-c", BURN], check=True)
    groups = sampler.stop()
    cpu, count = groups[f"{Path(sys.executable).name} -c"]
    assert cpu >= 0.55 and count >= 1, groups
    assert "all sampled" in process_cpu.table(groups).splitlines()[-1]


def test_processes_are_grouped_by_what_they_run():
    group = process_cpu.command_group
    assert group(["/v/bin/python", "-s", "-P", "-m", "autograder.grader.sandbox.zygote"], "x") == (
        "python -m autograder.grader.sandbox.zygote"
    )
    assert group(["/v/bin/python", "/v/bin/course-grade", "grade", "/c"], "x") == (
        "python course-grade"
    )
    assert group(["/v/bin/python3.11", "-u", "-c", "import sys"], "x") == "python3.11 -c"
    assert group(["/usr/lib/chromium/chromium", "--type=renderer"], "x") == "chromium"
    assert group([], "kdamond.0") == "[kdamond.0]"
