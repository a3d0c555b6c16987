"""A classroom set up from a course checkout only root may enter (issue 35 item 4): `make
setup` as root in a clone under /root, with a pyenv under /root, then the README's
`course-classroom setup` and `start`, no option and no hand work.

The checkout here is this repository shown in a new private folder under /root (a bind
mount the test makes and removes), and its Python is run from there, so the course's code,
its .venv and its packages lie where the classroom's users cannot enter, as after a fresh
clone in root's home. Setup must give the users a Python of the classroom's own and show
them the checkout read-only inside the classroom, with the instructor-only folders still
closed; a learner's server starts from it through the hub.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from classroom_hub import as_user, classroom, running_hub, skip_unless_a_classroom_can_run
from conftest import REPO

from autograder.classroom import passwords, reach

pytestmark = pytest.mark.notebooks
START_S = 240


def test_a_classroom_from_a_checkout_only_root_may_enter():
    skip_unless_a_classroom_can_run()
    sys.path.insert(0, str(REPO / "scripts"))
    from load_validate import Learner

    private = Path(tempfile.mkdtemp(prefix="course-private-", dir="/root"))  # mode 0700
    checkout = private / "course"
    checkout.mkdir()
    shown = subprocess.run(["mount", "--bind", str(REPO), str(checkout)], capture_output=True)
    if shown.returncode != 0:
        shutil.rmtree(private)  # nothing was mounted in it
        pytest.skip(f"no bind mount here: {shown.stderr.decode()[:200]}")
    try:
        python = checkout / ".venv" / "bin" / "python"
        assert reach.closed_above(checkout) is not None
        prefix = f"cp{secrets.token_hex(3)}"
        teacher, alice = f"{prefix}t", f"{prefix}a"
        with classroom(
            "classroom-private", teacher, [alice], python=python, checkout=checkout
        ) as made:
            about = json.loads((made.room / "classroom.json").read_text(encoding="utf-8"))
            bound = made.room / reach.COURSE
            assert about["binds"] == {str(bound): str(checkout)}, about
            assert reach.mounted_at(bound) and about["course"] == str(bound)
            with pytest.raises(OSError):  # read-only: nothing reaches the checkout through it
                (bound / "written-through-the-bind").write_text("x")
            assert Path(made.python) == made.room / "python" / "bin" / "python"

            # The learner runs the classroom's Python: the course's packages and code come
            # through the bind; the instructor-only folders stay closed to her there too.
            said = "import autograder, torch; print(autograder.__file__)"
            ran = as_user(alice, [made.python, "-c", said], cwd=made.home(alice))
            assert ran.returncode == 0 and ran.stdout.startswith(str(bound)), ran.stderr[-2000:]
            closed = as_user(alice, ["ls", str(bound / "autograder" / "references")], cwd=Path("/"))
            assert closed.returncode != 0
            config = (made.room / "hub" / "jupyterhub_config.py").read_text(encoding="utf-8")
            assert f'JUPYTER_PATH": {str(bound / ".venv")!r}' in config, config
            assert str(checkout) not in config  # nothing users are given names the closed path

            # Her server starts through the hub, from the bound environment.
            listed = passwords.handed_out(made.room)
            with running_hub(made.room, made.folder / "hub.log", python=python):
                learner = Learner(made.url, alice, listed[alice], 60)
                try:
                    learner.log_in()
                    learner.start_server(time.monotonic() + START_S)
                    learner.server("GET", "api/status").raise_for_status()
                    lab = learner.server("GET", "lab")
                    assert lab.status_code == 200, lab.status_code
                finally:
                    learner.clean_up()
    finally:
        subprocess.run(["umount", str(checkout)], capture_output=True, check=False)
        if not reach.mounted_at(checkout):  # never remove through the mount
            shutil.rmtree(private, ignore_errors=True)
