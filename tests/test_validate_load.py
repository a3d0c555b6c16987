"""Validate holds for a class (issue 25 item 3): learners pressing Validate at once all get
their result, never JupyterLab's "server unavailable".

A real classroom (``course-classroom setup``, throw-away Unix users removed at the end, also
on failure) with LOAD_VALIDATE_LEARNERS learners (4 in the suite; the README's numbers are
from 40), its hub started with ``course-classroom start``; scripts/load_validate.py logs each
learner in with their own password and has them all validate lesson 01 at the same moment
while polling like JupyterLab. Every learner must get Validate's result, with no failed poll.

Two light tests hold what makes it so: the classroom's proxy, as the hub's configuration
starts it, forwards more requests at once than the stock pure-Python proxy (10 in flight,
the others failed with 503 "Timeout in request queue" after 20 s): its target answers none
before all are in flight; and Validate waits for one of the machine's slots
(autograder/classroom/validate_queue.py).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from classroom_hub import classroom, running_hub, skip_unless_a_classroom_can_run
from conftest import REPO
from processes import free_port, stop_group, venv_env

LEARNERS = int(os.environ.get("LOAD_VALIDATE_LEARNERS", "4"))
DEADLINE_S = 300 + 60 * LEARNERS  # the whole load run, servers' start included
PYTHON = Path(sys.executable)
SLOW_S = 25  # longer than the stock proxy lets a request wait in its queue (20 s)
AT_ONCE = 16  # more than the stock proxy forwards at once (10)


@pytest.mark.notebooks
def test_learners_validating_at_once_all_get_their_result():
    skip_unless_a_classroom_can_run()
    prefix = f"lv{secrets.token_hex(3)}"
    learners = [f"{prefix}l{k:02d}" for k in range(LEARNERS)]
    with classroom("classroom-load", f"{prefix}t", learners) as made:
        with running_hub(made.room, made.folder / "hub.log"):
            report = made.folder / "load.json"
            load = subprocess.run(
                [
                    str(PYTHON),
                    str(REPO / "scripts" / "load_validate.py"),
                    str(made.room),
                    "--url",
                    made.url,
                    "--learners",
                    str(LEARNERS),
                    "--deadline",
                    str(DEADLINE_S),
                    "--json",
                    str(report),
                ],
                env=venv_env(),
                capture_output=True,
                text=True,
                timeout=DEADLINE_S + 120,
                check=False,
            )
            print(load.stdout)
            seen = load.stdout + load.stderr[-3000:]
            assert load.returncode == 0, seen + (made.folder / "hub.log").read_text()[-4000:]
        outcomes = json.loads(report.read_text())
        assert outcomes["summary"]["results"] == LEARNERS, seen
        alone = outcomes["alone"]  # the Validate the CPU bound is measured by
        assert alone["status"] == 200 and not alone["failures"], alone
        assert outcomes["summary"]["cpu_bound_s"] > 0, outcomes["summary"]
        for learner in outcomes["learners"]:
            assert learner["status"] == 200 and not learner["failures"], learner


class _Slow(BaseHTTPRequestHandler):
    """A server that answers no request before AT_ONCE of them are in flight, as learners'
    servers running Validate: a proxy that forwards fewer at once leaves the ones it
    forwarded waiting SLOW_S (then 500) and the ones it queued to its own timeout (503)."""

    all_in: threading.Barrier  # set per test: AT_ONCE parties, SLOW_S to arrive

    def do_GET(self):
        try:
            self.all_in.wait()
        except threading.BrokenBarrierError:
            self.send_error(500, "fewer requests in flight at once than the class sent")
            return
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def _proxy_command() -> list[str]:
    """The proxy command of the hub's configuration as course-classroom setup renders it."""
    from traitlets.config import Config

    from autograder.classroom import hub_config

    text = hub_config.render(
        Path("/srv/room"), hub_config.Listen(), PYTHON.parent, PYTHON, REPO, "t", ["a"]
    )
    config = Config()
    exec(compile(text, "jupyterhub_config.py", "exec"), {"get_config": lambda: config})
    return list(config.ConfigurableHTTPProxy.command)


def _status(url: str) -> int | str:
    """The status of a GET, HTTP errors included; the error's name when none came."""
    try:
        with urllib.request.urlopen(url, timeout=SLOW_S * 4) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError as error:
        return type(error).__name__


def test_the_classroom_proxy_forwards_a_class_of_slow_requests_at_once(tmp_path):
    pytest.importorskip("configurable_http_proxy", reason="the classroom extra is not installed")
    _Slow.all_in = threading.Barrier(AT_ONCE, timeout=SLOW_S)
    target = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    threading.Thread(target=target.serve_forever, daemon=True).start()
    port, api_port = free_port(), free_port()
    argv = [
        *_proxy_command(),
        *("--ip", "127.0.0.1", "--port", str(port), "--api-ip", "127.0.0.1"),
        *("--api-port", str(api_port), "--default-target"),
        f"http://127.0.0.1:{target.server_address[1]}",
    ]
    with open(tmp_path / "proxy.log", "wb") as log:
        proxy = subprocess.Popen(
            argv,
            env=venv_env(CONFIGPROXY_AUTH_TOKEN="test"),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while _status(f"http://127.0.0.1:{port}/_chp_healthz") != 200:
            assert proxy.poll() is None and time.monotonic() < deadline, argv
            time.sleep(0.5)
        answers: list[int | str] = []
        requests_at_once = [
            threading.Thread(target=lambda: answers.append(_status(f"http://127.0.0.1:{port}/x")))
            for _ in range(AT_ONCE)
        ]
        for request in requests_at_once:
            request.start()
        for request in requests_at_once:
            request.join()
        assert answers == [200] * AT_ONCE, (answers, (tmp_path / "proxy.log").read_text()[-2000:])
    finally:
        stop_group(proxy)
        target.shutdown()


def test_validate_waits_for_one_of_the_machines_slots(monkeypatch):
    import asyncio

    from autograder.classroom import validate_queue

    monkeypatch.setattr(validate_queue, "_NAME", f"\0test-validate-slot-{os.getpid()}-{{}}")
    monkeypatch.setattr(validate_queue, "RETRY_S", 0.05)
    held = [validate_queue._take_slot() for _ in range(validate_queue.SLOTS)]
    assert all(held) and validate_queue._take_slot() is None

    async def wait_for_a_slot() -> float:
        began = time.monotonic()
        async with validate_queue.machine_slot():
            return time.monotonic() - began

    async def free_one_later():
        await asyncio.sleep(0.5)
        held.pop().close()

    async def both():
        return (await asyncio.gather(wait_for_a_slot(), free_one_later()))[0]

    try:
        assert asyncio.run(both()) >= 0.5  # it waited until a holder let go
        monkeypatch.setattr(validate_queue, "WAIT_AT_MOST_S", 0.2)
        held.append(validate_queue._take_slot())
        assert asyncio.run(wait_for_a_slot()) < 5  # squatted slots: it runs anyway
    finally:
        for holder in held:
            if holder is not None:
                holder.close()
