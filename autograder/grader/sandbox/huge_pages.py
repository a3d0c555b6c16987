"""The zygote's memory in huge pages, so that forking it and ending its children is cheap.

Importing torch leaves ~430 MB of private memory in the zygote (its C++ registrations on
the heap, the interpreter's objects), mapped by some 110,000 page-table entries. Every
fork copies those entries and every child's exit tears them down again: 27 ms of system
time per fork and exit here, and a graded notebook forks about ten times (the kernel, the
observer, one observer child per test cell, each with the intermediate that enters the
PID namespace). ``MADV_COLLAPSE`` (Linux 6.1) rewrites that memory as 2 MiB pages once,
before the first fork, whatever the machine's transparent-huge-page setting: a fork then
copies one entry per 2 MiB (7 ms per fork and exit). A child that writes to a shared huge
page gets a private copy of the 4 KiB it wrote, as before; only the entry is split.

Collapsing is a copy of all that memory (about 1 s of one core here), so a run that grades
a few notebooks is better off without it: it pays back at ~5 submissions in CPU and ~10 in
wall time with two workers (lesson 03, 24 submissions: 45.3 -> 41.5 busy core-seconds).
Where the kernel cannot (an older Linux, no huge page free), nothing changes but the time.
"""

from __future__ import annotations

import ctypes
import functools
import re

MADV_COLLAPSE = 25
WORTH_IT_FROM = 8  # submissions in a run from which its zygote collapses its memory
HUGE_PAGE = 2 << 20
_MAPPING = re.compile(r"([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(.*)")


def _private_writable_memory(maps: str) -> list[tuple[int, int]]:
    """The anonymous, writable mappings (the heap among them) that span a whole huge page."""
    regions = []
    for line in maps.splitlines():
        found = _MAPPING.match(line)
        if found is None:
            continue
        start, end, perms, inode, name = found.groups()
        low, high = int(start, 16), int(end, 16)
        first_whole_page = -(-low // HUGE_PAGE) * HUGE_PAGE
        private = inode == "0" and "w" in perms and name in ("", "[heap]")
        if private and high - first_whole_page >= HUGE_PAGE:
            regions.append((low, high))
    return regions


def collapse() -> int:
    """Ask the kernel to back this process's private memory with huge pages; the bytes of
    the regions it took (0 where it cannot)."""
    with open("/proc/self/maps", encoding="ascii") as maps:
        regions = _private_writable_memory(maps.read())
    return sum(high - low for low, high in regions if collapse_range(low, high))


def collapse_range(low: int, high: int) -> bool:
    """Whether the kernel rewrote the whole huge pages between the addresses ``low`` and
    ``high`` of this process's private memory as huge pages."""
    return _madvise()(low, high - low, MADV_COLLAPSE) == 0


@functools.cache
def _madvise():
    """The C library's madvise, looked up once (collapse asks once per region)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return libc.madvise
