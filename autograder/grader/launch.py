"""Exec a command under resource limits, optionally inside a pids cgroup.

Run as a script (``python launch.py ...``), not imported through the package,
so that starting a kernel does not pay for importing torch twice.
"""

import argparse
import os
import resource
import sys
from pathlib import Path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--memory", type=int, required=True, help="address-space limit, bytes (0: none)"
    )
    parser.add_argument("--processes", type=int, help="RLIMIT_NPROC (ignored for root)")
    parser.add_argument("--cgroup", help="pids cgroup folder to join before exec")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    if args.cgroup:
        (Path(args.cgroup) / "cgroup.procs").write_text(str(os.getpid()))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if args.memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (args.memory, args.memory))
    if args.processes:
        resource.setrlimit(resource.RLIMIT_NPROC, (args.processes, args.processes))
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
