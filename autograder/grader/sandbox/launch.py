"""Join the submission's cgroup, apply rlimits, then exec the sandbox (or the command).

Run as a script (``python -I -S launch.py ...``), not imported through the
package, so that starting a kernel does not pay for importing torch twice. It
runs outside the sandbox, as the grader, so that the cgroup it joins (and every
process the sandbox starts, which inherits it) is the submission's.
"""

import argparse
import ctypes
import os
import resource
import stat
import sys

CLONE_NEWNS, MS_BIND, MS_REC, MS_PRIVATE = 0x00020000, 4096, 16384, 1 << 18


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--join", action="append", default=[], help="cgroup.procs file to join")
    parser.add_argument("--memory", type=int, default=0, help="RLIMIT_AS, bytes (0: none)")
    parser.add_argument("--file-size", type=int, default=0, help="RLIMIT_FSIZE, bytes (0: none)")
    parser.add_argument("--processes", type=int, default=0, help="RLIMIT_NPROC (0: none)")
    parser.add_argument("--user", type=int, help="as root: become this uid before the sandbox")
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
    if args.user is not None and os.getuid() == 0:
        become(args.user, _bind_sources(command))
    os.execvp(command[0], command)


def _bind_sources(command: list[str]) -> list[str]:
    """The host paths bubblewrap will bind into the sandbox."""
    sources = []
    for index, word in enumerate(command[:-1]):
        if word == "--":
            break
        if word in ("--bind", "--ro-bind"):
            sources.append(command[index + 1])
    return sources


def become(uid: int, sources: list[str]) -> None:
    """Drop root for ``uid`` (own group, no others), keeping ``sources`` reachable.

    A source below a folder others may not enter (``/root/.pyenv``) is made
    reachable in a private mount namespace of this process only: that folder is
    covered by an empty tmpfs into which the sources are bound back.
    """
    blocked: dict[str, list[str]] = {}
    for source in sources:
        folder = os.path.dirname(os.path.realpath(source))
        while folder != "/":
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                blocked.setdefault(folder, []).append(os.path.realpath(source))
            folder = os.path.dirname(folder)
    if blocked:
        libc = ctypes.CDLL(None, use_errno=True)
        _check(libc.unshare(CLONE_NEWNS), "unshare")
        _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount private")
        for folder in sorted(blocked, key=len):
            kept = {path: os.open(path, os.O_PATH) for path in blocked[folder]}
            _check(libc.mount(b"tmpfs", folder.encode(), b"tmpfs", 0, b"mode=0755"), "tmpfs")
            for path, fd in kept.items():
                if os.path.isdir(f"/proc/self/fd/{fd}"):
                    os.makedirs(path, exist_ok=True)
                else:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    open(path, "a").close()
                source = f"/proc/self/fd/{fd}".encode()
                _check(libc.mount(source, path.encode(), None, MS_BIND | MS_REC, None), path)
                os.close(fd)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


if __name__ == "__main__":
    sys.exit(main())
