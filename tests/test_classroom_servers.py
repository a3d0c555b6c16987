"""Learners' servers as the classroom's hub starts them (issue 35 item 7): each in a PID
namespace of its own, so a learner sees their own processes only, not the other learners'
or the instructor's and their command lines; the instructor's server is not wrapped.

A real classroom (throw-away Unix users, removed at the end) and its hub; two learners log
in with their own passwords (over HTTP, as scripts/load_validate.py does) and start their
servers. The test, as root, looks at each server from outside: its PID namespace and what
its own /proc lists.
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


def test_each_learner_sees_only_their_own_processes():
    skip_unless_a_classroom_can_run()
    sys.path.insert(0, str(REPO / "scripts"))
    from load_validate import Learner

    prefix = f"cs{secrets.token_hex(3)}"
    teacher, alice, bob = (f"{prefix}{role}" for role in ("t", "a", "b"))
    with classroom("classroom-servers", teacher, [alice, bob]) as made:
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
                log = (made.folder / "hub.log").read_text(errors="replace")
                assert "own_pids: the server sees every user's processes" not in log
            finally:
                for person in people:
                    person.clean_up()
