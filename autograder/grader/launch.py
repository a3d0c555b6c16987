"""Join the submission's cgroup, apply rlimits, then exec the sandbox (or the command).

Run as a script (``python -I -S launch.py ...``), not imported through the
package, so that starting a kernel does not pay for importing torch twice. It
runs outside the sandbox, as the grader, so that the cgroup it joins (and every
process the sandbox starts, which inherits it) is the submission's.
"""

import argparse
import os
import resource
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--join", action="append", default=[], help="cgroup.procs file to join")
    parser.add_argument("--memory", type=int, default=0, help="RLIMIT_AS, bytes (0: none)")
    parser.add_argument("--file-size", type=int, default=0, help="RLIMIT_FSIZE, bytes (0: none)")
    parser.add_argument("--processes", type=int, default=0, help="RLIMIT_NPROC (0: none)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    for procs in args.join:
        with open(procs, "w") as handle:  # fails loudly: no group, no learner code
            handle.write(str(os.getpid()))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for limit, value in (
        (resource.RLIMIT_AS, args.memory),
        (resource.RLIMIT_FSIZE, args.file_size),
        (resource.RLIMIT_NPROC, args.processes),
    ):
        if value > 0:
            resource.setrlimit(limit, (value, value))
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
