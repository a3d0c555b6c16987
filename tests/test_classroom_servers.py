"""Learners' servers as the classroom's hub starts them (issue 35 items 2 and 7): each in a
PID namespace of its own, so a learner sees their own processes only, not the other
learners' or the instructor's and their command lines (the instructor's server is not
wrapped); each bounded (memory, /tmp): a learner's memory bomb loses its own process and a
full /tmp says so, while every server keeps answering; a learner's terminal has the course's
commands.

A real classroom (throw-away Unix users, removed at the end) and its hub; two learners log
in with their own passwords (over HTTP, as scripts/load_validate.py does) and start their
servers. The test, as root, looks at each server from outside: its PID namespace and what
its own /proc lists; then types in a learner's terminal over its websocket.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from pathlib import Path

import pytest
from classroom_hub import classroom, processes_of, running_hub, skip_unless_a_classroom_can_run
from conftest import REPO

from autograder.classroom import passwords

pytestmark = pytest.mark.notebooks
START_S = 240


def _server_of(name: str) -> int:
    """The host pid of ``name``'s jupyterhub.singleuser process."""
    import pwd

    uid = pwd.getpwnam(name).pw_uid
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for pid in processes_of({uid}):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"jupyterhub.singleuser" in argv and b"autograder.classroom.own_pids" not in argv:
                return pid
        time.sleep(1)
    raise AssertionError(f"no server process of {name}")


def _terminal(learner, command: str, timeout_s: float = 300) -> str:
    """Run ``command`` in a new terminal of the learner's JupyterLab (its websocket, with
    their token), as typed there; return what the terminal showed, with its exit status."""
    import asyncio
    import json
    import re

    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    made = learner.server("POST", "api/terminals")
    made.raise_for_status()
    name = made.json()["name"]
    url = learner.base.replace("http", "ws", 1) + f"/user/{learner.name}/terminals/websocket/"
    headers = {"Authorization": learner.http.headers["Authorization"]}

    async def talk() -> str:
        socket = await websocket_connect(HTTPRequest(url + name, headers=headers))
        socket.write_message(json.dumps(["set_size", 50, 200, 800, 2000]))
        socket.write_message(json.dumps(["stdin", command + "; echo __DONE__$?\r"]))
        shown = ""
        while not re.search(r"__DONE__\d+", shown):
            message = await asyncio.wait_for(socket.read_message(), timeout_s)
            if message is None:
                break
            kind, *data = json.loads(message)
            if kind == "stdout":
                shown += data[0]
        socket.close()
        return shown

    try:
        return asyncio.run(talk())
    finally:
        learner.server("DELETE", f"api/terminals/{name}")


def test_each_learner_sees_only_their_own_processes():
    skip_unless_a_classroom_can_run()
    sys.path.insert(0, str(REPO / "scripts"))
    from load_validate import Learner

    prefix = f"cs{secrets.token_hex(3)}"
    teacher, alice, bob = (f"{prefix}{role}" for role in ("t", "a", "b"))
    limits = ("--memory", "1G", "--tmp-mb", "64")  # small: the test fills them
    with classroom("classroom-servers", teacher, [alice, bob], setup_args=limits) as made:
        listed = passwords.handed_out(made.room)
        with running_hub(made.room, made.folder / "hub.log"):
            people = [Learner(made.url, name, listed[name], 60) for name in (alice, bob, teacher)]
            try:
                for person in people:
                    person.log_in()
                    person.start_server(time.monotonic() + START_S)
                    person.server("GET", "api/status").raise_for_status()  # it answers
                servers = {person.name: _server_of(person.name) for person in people}
                ours = os.readlink("/proc/self/ns/pid")
                for name in (alice, bob):
                    pid = servers[name]
                    assert os.readlink(f"/proc/{pid}/ns/pid") != ours, name
                    status = Path(f"/proc/{pid}/status").read_text()
                    (nspid,) = [line for line in status.splitlines() if line.startswith("NSpid")]
                    assert nspid.split()[-1] == "2", nspid  # PID 2, under the wrapper's init
                    # What the learner's /proc lists: their server and what it started only.
                    seen = [p for p in os.listdir(f"/proc/{pid}/root/proc") if p.isdigit()]
                    assert len(seen) < 10, seen
                    cmdlines = b" ".join(
                        Path(f"/proc/{pid}/root/proc/{p}/cmdline").read_bytes() for p in seen
                    )
                    others = [n for n in (alice, bob, teacher) if n != name]
                    assert not any(o.encode() in cmdlines for o in others), cmdlines[:2000]
                assert os.readlink(f"/proc/{servers[teacher]}/ns/pid") == ours  # not wrapped

                # In alice's terminal: the course's commands; her server's limits hold for
                # her alone (a memory bomb loses its own process, a full /tmp says so).
                learner = people[0]
                shown = _terminal(learner, "command -v python nbgrader")
                assert "__DONE__0" in shown and f"{Path(made.python).parent}/nbgrader" in shown
                bomb = (
                    "python -c 'b = bytearray(1536 * 1024**2); b[::4096] = b\"x\" * len(b[::4096])'"
                )
                shown = _terminal(learner, bomb)
                assert "__DONE__137" in shown, shown[-2000:]  # SIGKILL by the OOM killer
                shown = _terminal(learner, "head -c 100M /dev/zero > /tmp/fill")
                assert "No space left on device" in shown and "__DONE__1" in shown, shown
                for person in people:  # everyone's server still answers, alice's too
                    person.server("GET", "api/status").raise_for_status()
                log = (made.folder / "hub.log").read_text(errors="replace")
                assert "own_pids: the server sees every user's processes" not in log
            finally:
                for person in people:
                    person.clean_up()
