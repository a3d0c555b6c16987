"""Isolation for a kernel: bubblewrap where the machine allows it, else limits only.

With bubblewrap the kernel sees the file system read-only, has no network, its
own process namespace, only its working directory writable, and the course
directory and the instructor's sources replaced by empty folders.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sandbox:
    """How kernels are isolated in this grading run."""

    kind: str  # "bubblewrap" or "limits only"
    hidden: tuple[Path, ...] = ()

    def wrap(self, command: list[str], workdir: Path) -> list[str]:
        """Return ``command`` wrapped so that it runs isolated in ``workdir``."""
        if self.kind != "bubblewrap":
            return command
        argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for path in self.hidden:
            if path.exists():
                argv += ["--tmpfs", str(path)]
        argv += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir)]
        argv += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent"]
        argv += ["--new-session", "--unsetenv", "JPY_PARENT_PID"]
        return argv + ["--", *command]

    @property
    def warning(self) -> str | None:
        """A loud message when isolation is weaker than the course wants."""
        if self.kind == "bubblewrap":
            return None
        return (
            "WARNING: bubblewrap (bwrap) is not usable on this machine, so learner code runs "
            "WITHOUT file-system and network isolation: only time, memory and process limits "
            "apply. Submissions could read course files or use the network. Install "
            "bubblewrap (e.g. `apt-get install bubblewrap`) to isolate them."
        )


@functools.cache
def bubblewrap_works() -> bool:
    """Whether bwrap exists and can create the namespaces the sandbox needs here."""
    if shutil.which("bwrap") is None:
        return False
    probe = ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--", "true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def choose(hidden: list[Path], want: str = "auto") -> Sandbox:
    """Pick bubblewrap when asked for or available; ``want`` is auto, bubblewrap or none."""
    if want == "none":
        return Sandbox("limits only")
    if bubblewrap_works():
        return Sandbox("bubblewrap", tuple(p.resolve() for p in hidden))
    if want == "bubblewrap":
        raise RuntimeError("--sandbox bubblewrap was asked for, but bwrap is not usable here.")
    return Sandbox("limits only")
