"""The JupyterLab server `make lab` starts, run by a test on a free loopback port with a token."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from conftest import REPO
from processes import free_port, stop_group

TOKEN = "course-test-token"
START_TIMEOUT_S = 90


@dataclass(frozen=True)
class Lab:
    """A running server: its base URL, its token and the file holding its terminal output."""

    base: str
    token: str
    log: Path

    def url(self, path: str) -> str:
        """``path`` on this server with the token, e.g. ``lab.url("/api/status")``."""
        joiner = "&" if "?" in path else "?"
        return f"{self.base}{path}{joiner}token={self.token}"

    def terminal(self) -> str:
        """What the server has printed so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")


def get(
    url: str, data: bytes | None = None, timeout: float = 10, method: str | None = None
) -> tuple[int, str]:
    """GET (or POST ``data``, or ``method``); return the status and body, HTTP errors too."""
    request = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, ""


@contextlib.contextmanager
def running_lab(workdir: Path, root: Path | None = None) -> Iterator[Lab]:
    """Start `make lab` with a fresh HOME under ``workdir``; stop its process group at the end.

    It serves ``root`` instead of notebooks/ when given.
    """
    port = free_port()
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    log = workdir / "lab-terminal.log"
    args = f"--no-browser --port={port} --IdentityProvider.token={TOKEN}"
    variables = [f"LAB_ARGS={args}", *([f"LAB_ROOT={root}"] if root else [])]
    with open(log, "wb") as terminal:
        process = subprocess.Popen(
            ["make", "--no-print-directory", "lab", *variables],
            cwd=REPO,
            env=dict(os.environ, HOME=str(home), JUPYTER_RUNTIME_DIR=str(home / "runtime")),
            stdin=subprocess.DEVNULL,
            stdout=terminal,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    lab = Lab(f"http://127.0.0.1:{port}", TOKEN, log)
    try:
        _wait_until_up(process, lab)
        yield lab
    finally:
        stop_group(process)


def _wait_until_up(process: subprocess.Popen, lab: Lab) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"`make lab` exited early with code {process.returncode}:\n{lab.terminal()}"
            )
        with contextlib.suppress(OSError):
            if get(lab.url("/api/status"))[0] == 200:
                return
        time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not answer within {START_TIMEOUT_S} s:\n{lab.terminal()}")
