"""A learner's home of a fixed size (issue 35 item 2's disk limit, `setup --home-mb`): on a
file system without quotas each learner setup makes gets a home that is a file system of its
own; filling it stops at its size with "No space left on device", another learner's home
and the machine's disk do not fill, and the classroom's spawner mounts it again (after a
reboot ended the mount) before the learner's server starts.

A real classroom (throw-away Unix users, removed at the end, their homes unmounted first).
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import time

import pytest
from classroom_hub import as_user, classroom, running_hub, skip_unless_a_classroom_can_run
from conftest import REPO

from autograder.classroom import disks, passwords, reach

pytestmark = pytest.mark.notebooks
START_S = 240


def test_each_learners_home_has_its_own_size_and_the_spawner_mounts_it(tmp_path):
    skip_unless_a_classroom_can_run()
    if subprocess.run(["losetup", "-f"], capture_output=True).returncode != 0:
        pytest.skip("no free loop device on this machine")
    sys.path.insert(0, str(REPO / "scripts"))
    from load_validate import Learner

    prefix = f"cd{secrets.token_hex(3)}"
    teacher, alice, bob = (f"{prefix}{role}" for role in ("t", "a", "b"))
    with classroom(
        "classroom-disks",
        teacher,
        [alice, bob],
        setup_args=("--home-mb", "64"),
        logs_on_failure=tmp_path / "logs",
    ) as made:
        homes = disks.listed(made.room)
        assert set(homes) == {str(made.home(alice)), str(made.home(bob))}  # not the teacher's
        for name in (alice, bob):
            home = made.home(name)
            assert reach.mounted_at(home), name
            assert (home / ".jupyter" / "nbgrader_config.py").is_file()  # setup's settings
            assert home.stat().st_mode & 0o777 == 0o700
        assert (made.room / disks.FOLDER).stat().st_mode & 0o777 == 0o700
        # alice fills her home: it stops at its size, and says so.
        fill = as_user(alice, ["sh", "-c", "head -c 100M /dev/zero > ~/fill"], cwd=made.home(alice))
        assert fill.returncode != 0 and "No space left on device" in fill.stderr, fill
        assert (made.home(alice) / "fill").stat().st_size < 64 * 1024**2
        # bob's home still has room.
        room = as_user(bob, ["sh", "-c", "head -c 10M /dev/zero > ~/data"], cwd=made.home(bob))
        assert room.returncode == 0, room.stderr

        # She frees her home (a full one leaves no room for her server's own files).
        kept = "rm ~/fill && echo mine > ~/kept"
        assert as_user(alice, ["sh", "-c", kept], cwd=made.home(alice)).returncode == 0

        # A reboot ends the mount: the spawner mounts it again before alice's server starts.
        subprocess.run(["umount", str(made.home(alice))], check=True)
        assert not reach.mounted_at(made.home(alice))
        listed = passwords.handed_out(made.room)
        with running_hub(made.room, made.folder / "hub.log"):
            subprocess.run(["umount", str(made.home(alice))], check=False)  # start mounted it
            assert not reach.mounted_at(made.home(alice))
            learner = Learner(made.url, alice, listed[alice], 60)
            try:
                learner.log_in()
                learner.start_server(time.monotonic() + START_S)
                assert reach.mounted_at(made.home(alice))
                found = learner.server("GET", "api/contents/kept").json()
                assert found.get("content") == "mine\n", found  # her files, not an empty folder
            finally:
                learner.clean_up()
