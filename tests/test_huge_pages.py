"""The zygote's memory moved into huge pages (autograder/grader/sandbox/huge_pages.py).

Which mappings are taken is read from /proc/self/maps; what taking them does is seen in a
fresh interpreter: its private memory lands in huge pages, its contents unchanged (the
grading zygote's own is checked in test_zygote.py). What that saves a fork is measured, not
tested: scripts/benchmark_grading.py and the figures in huge_pages.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder.grader.sandbox import huge_pages

MAPS = """\
55d0c0000000-55d0c0a00000 rw-p 00000000 00:00 0                          [heap]
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
7f0000400000-7f0000500000 rw-p 00000000 00:00 0
7f0000601000-7f0000900000 rw-p 00000000 00:00 0
7f0000a00000-7f0001000000 r--p 00000000 00:00 0
7f0001000000-7f0001400000 rw-p 00200000 08:01 1234                       /usr/lib/libtorch_cpu.so
7f0001400000-7f0001800000 rw-s 00000000 00:05 99                         /dev/shm/x
7f0001800000-7f0001c00000 rw-p 00000000 00:00 0                          [stack]
"""


def test_only_private_writable_memory_that_holds_a_whole_huge_page_is_taken():
    assert huge_pages._private_writable_memory(MAPS) == [
        (0x55D0C0000000, 0x55D0C0A00000),  # the heap
        (0x7F0000000000, 0x7F0000400000),  # anonymous, two huge pages
    ]
    # not: 1 MiB of anonymous memory; 3 MiB whose first whole 2 MiB page (from 0x...800000)
    # would end past it; read-only, file-backed, shared memory; the stack


COLLAPSE = """\
import json, os
from autograder.grader.sandbox import huge_pages
def huge():
    rollup = open('/proc/self/smaps_rollup').read().splitlines()
    return int(next(l for l in rollup if l.startswith('AnonHugePages')).split()[1])
held = bytearray(os.urandom(1 << 20) * 256)  # 256 MiB, every page written
before = huge()
taken = huge_pages.collapse()
after = huge()
kept = held[-1] == held[(1 << 20) - 1] and held[:8] == held[1 << 20 : (1 << 20) + 8]
print(json.dumps({'taken': taken, 'before': before, 'after': after, 'kept': kept}))
"""


def test_collapsing_moves_private_memory_into_huge_pages_as_it_was():
    done = subprocess.run(
        [sys.executable, "-c", COLLAPSE], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(done.stdout)
    if seen["taken"] == 0:
        pytest.skip("skipped: this Linux cannot collapse memory into huge pages (MADV_COLLAPSE)")
    assert seen["kept"], "the memory's contents changed"
    assert seen["after"] - seen["before"] >= 200 * 1024, seen  # KiB: most of the 256 MiB
