"""Inside the sandbox, before learner code: allow writes only to scratch (Landlock), then exec.

bubblewrap decides what the process sees; Landlock decides where it may
write. The scratch folders (size-limited tmpfs) are writable; ``/dev`` only
for writing to its devices (``/dev/null``); the process's own socket folder
(the kernel's connection file and IPC sockets, on the grader's disk) only for
making and removing Unix sockets, so no file written there can fill the disk.
Run as ``python -I -S confine.py ...`` inside the sandbox: no site, no imports
beyond the standard library.
"""

import argparse
import ctypes
import os
import sys

WRITE_FILE, REMOVE_DIR, REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
MAKE_SOCK, REFER, TRUNCATE = 1 << 9, 1 << 13, 1 << 14
EVERYTHING = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE | REFER | TRUNCATE
SYSCALLS = {"create_ruleset": 444, "add_rule": 445, "restrict_self": 446}  # all architectures
PR_SET_NO_NEW_PRIVS = 38


class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi_version(libc) -> int:
    """Landlock's ABI version, 0 where the kernel lacks it."""
    version = libc.syscall(SYSCALLS["create_ruleset"], None, ctypes.c_size_t(0), 1)
    return max(version, 0)


def restrict(rules: dict[str, int]) -> None:
    """Allow the handled write accesses only as ``rules`` (path -> access bits) says."""
    libc = ctypes.CDLL(None, use_errno=True)
    abi = abi_version(libc)
    if abi < 1:
        raise OSError("Landlock is not available in this kernel")
    handled = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE
    handled |= (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)
    attr = ctypes.c_uint64(handled)
    ruleset = libc.syscall(SYSCALLS["create_ruleset"], ctypes.byref(attr), ctypes.c_size_t(8), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for path, access in rules.items():
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        rule = PathBeneath(access & handled, fd)
        if libc.syscall(SYSCALLS["add_rule"], ruleset, 1, ctypes.byref(rule), 0) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
        os.close(fd)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.syscall(SYSCALLS["restrict_self"], ruleset, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writable", action="append", default=[], help="scratch folder")
    parser.add_argument("--devices", action="append", default=[], help="devices may be written")
    parser.add_argument("--sockets", action="append", default=[], help="sockets may be made")
    parser.add_argument("--probe", action="store_true", help="print the Landlock ABI, exit")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.probe:
        print(abi_version(ctypes.CDLL(None, use_errno=True)))
        return 0
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    rules = dict.fromkeys(args.writable, EVERYTHING)
    rules.update(dict.fromkeys(args.devices, WRITE_FILE | TRUNCATE))
    rules.update(dict.fromkeys(args.sockets, MAKE_SOCK | REMOVE_FILE))
    restrict(rules)
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
