"""Adding learners to a running classroom (issue 35 item 5): setup run again with a longer
class list makes the new accounts, registers them with their names in their course's
gradebook and adds them to the running hub through its REST API, so they log in at once,
while the learners already working keep their servers (no restart).

A real classroom (throw-away Unix users, removed at the end) and its hub; setup is the one
the README gives, without --python on this machine's private pyenv (issue 35 item 4).
"""

from __future__ import annotations

import json
import secrets
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from classroom_hub import (
    classroom,
    classroom_command,
    running_hub,
    skip_unless_a_classroom_can_run,
    throwaway_users,
)
from conftest import REPO

from autograder import course
from autograder.classroom import hub_api, passwords, setup

pytestmark = pytest.mark.notebooks
START_S = 240


def _hub_api(made, token: str, method: str, path: str, body: dict | None = None) -> int:
    """The status of a request to the hub's REST API with ``token``."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{made.ports['hub-port']}/hub/api/{path}",
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        method=method,
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_learners_join_the_running_hub_and_log_in_without_a_restart(tmp_path):
    skip_unless_a_classroom_can_run()
    sys.path.insert(0, str(REPO / "scripts"))
    from load_validate import Learner

    prefix = f"cr{secrets.token_hex(3)}"
    teacher, alice, carol, chen = (f"{prefix}{role}" for role in ("t", "a", "c", "z"))
    with throwaway_users([carol, chen]), classroom("classroom-roster", teacher, [alice]) as made:
        # The first setup: the service's token is root's only, the hub's config names its
        # one scope.
        token_file = hub_api.token_path(made.room)
        assert token_file.stat().st_mode & 0o777 == 0o600 and token_file.stat().st_uid == 0
        config = (made.room / "hub" / "jupyterhub_config.py").read_text(encoding="utf-8")
        assert "\"scopes\": ['admin:users']" in config, config
        token = token_file.read_text(encoding="ascii").strip()
        listed = passwords.handed_out(made.room)
        hub_log = made.folder / "hub.log"
        with running_hub(made.room, hub_log) as hub:
            working = Learner(made.url, alice, listed[alice], 60)
            late = None
            try:
                working.log_in()
                working.start_server(time.monotonic() + START_S)
                before = working.hub("GET", f"users/{alice}").json()["servers"][""]["started"]

                # The class list grows by an English and a Chinese learner, with names.
                roster = tmp_path / "class.csv"
                roster.write_text(
                    "Username,First name,Surname,Email address,Language\n"
                    f"{alice},Alice,Liddell,alice@example.org,en\n"
                    f"{carol},Carol,Kaye,carol@example.org,en\n"
                    f"{chen},婷,李,chen@example.org,zh\n",
                    encoding="utf-8",
                )
                ports = [a for n, p in made.ports.items() for a in (f"--{n}", str(p))]
                again = classroom_command(
                    "setup", str(made.room), "--instructor", teacher, "--roster", str(roster),
                    *ports, timeout=600,
                )  # fmt: skip
                assert again.returncode == 0, again.stdout + again.stderr
                added = f"added to the running hub, no restart needed: {carol}, {chen}"
                assert added in again.stdout and "已加入运行中的 JupyterHub" in again.stdout

                # The new learner logs in with the password setup gave her, and the hub that
                # let her in is the same process: nobody's server was stopped.
                given = passwords.handed_out(made.room)
                assert set(given) == {teacher, alice, carol, chen}
                late = Learner(made.url, carol, given[carol], 60)
                late.log_in()
                assert hub.poll() is None
                still = working.hub("GET", f"users/{alice}").json()["servers"][""]
                assert still["ready"] and still["started"] == before
                working.server("GET", "api/status").raise_for_status()

                # Registered with their names in their course's gradebook.
                from nbgrader.api import Gradebook

                home = Path(made.home(teacher))
                with Gradebook(course.gradebook_url(home / setup.course_id("en"))) as gradebook:
                    person = gradebook.find_student(carol)
                    assert (person.first_name, person.last_name, person.email) == (
                        "Carol",
                        "Kaye",
                        "carol@example.org",
                    )
                with Gradebook(course.gradebook_url(home / setup.course_id("zh"))) as gradebook:
                    assert gradebook.find_student(chen).last_name == "李"

                # The service's token may add users and nothing more: no servers, no admins,
                # no tokens of others.
                assert _hub_api(made, token, "POST", f"users/{alice}/server", {}) == 403
                assert _hub_api(made, token, "GET", f"users/{alice}/tokens") == 403
                admin = {"usernames": ["nosuchadmin"], "admin": True}
                assert _hub_api(made, token, "POST", "users", admin) == 403

                # Once more with the same class: nothing new for the hub, nobody stopped.
                third = classroom_command(
                    "setup", str(made.room), "--instructor", teacher, "--roster", str(roster),
                    *ports, timeout=600,
                )  # fmt: skip
                assert third.returncode == 0, third.stdout + third.stderr
                assert "the running hub already knows every learner" in third.stdout
                assert working.hub("GET", f"users/{alice}").json()["servers"][""]["ready"]
            finally:
                working.clean_up()
                if late is not None:
                    late.clean_up()
