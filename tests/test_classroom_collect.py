"""Collect takes only a learner's own work (issue 35 item 1; autograder/classroom/owned.py).

A learner can write in the exchange's inbound, and can name a submission after
themselves while it is a symbolic link (to another learner's submitted folder, to the
instructor's ``source/``, to a file), or a folder holding a link, a hard link or another
account's file. nbgrader's copytree would copy what the link points to, as the instructor.
Each form is planted here and must be refused and listed, the learner's real submission
collected in its place, nothing of the target copied; a link swapped in after the check is
refused too. Files change owners: root only (the classroom needs root anyway). The real
classroom test (`test_classroom_collect_with_real_learners`, below) plants each form as the
learner's own account and collects both ways, terminal and formgrader.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
from pathlib import Path

import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from autograder.classroom import owned
from autograder.course import put_interpreter_bin_on_path
from autograder.grader.reports import gradebook_rows

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="files change owners: needs root")

COURSE_ID, LESSON = "c", "l1"
LEARNER, OTHER = "nobody", "daemon"  # accounts every Debian/Ubuntu has


def _ids(name: str) -> tuple[int, int]:
    account = pwd.getpwnam(name)
    return account.pw_uid, account.pw_gid


def _give(path: Path, name: str) -> None:
    """``path`` and what is under it, the links themselves included, become ``name``'s."""
    for entry in [path, *path.rglob("*")] if path.is_dir() and not path.is_symlink() else [path]:
        os.chown(entry, *_ids(name), follow_symlinks=False)


class Room:
    """An exchange with the course's inbound, the instructor's course, learners' folders."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.course = tmp_path / "course"
        self.inbound = tmp_path / "exchange" / COURSE_ID / "inbound"
        self.inbound.mkdir(parents=True)
        (self.course / "source" / LESSON).mkdir(parents=True)
        (self.course / "source" / LESSON / "l1.ipynb").write_text("SOLUTION of the instructor")
        self.stamp = 0

    def submission(self, who: str, text: str, owner: str | None = None) -> Path:
        """A real submission folder as nbgrader submit makes it, owned by ``owner`` (or who)."""
        folder = self.name(who)
        folder.mkdir()
        (folder / "l1.ipynb").write_text(text)
        (folder / "timestamp.txt").write_text(self.when)
        _give(folder, owner or who)
        return folder

    def name(self, who: str) -> Path:
        """A new submission path in ``who``'s name, each newer than the one before."""
        self.stamp += 1
        self.when = f"2026-12-02 07:{self.stamp:02d}:00.000000 UTC"
        return self.inbound / f"{who}+{LESSON}+{self.when}+r{self.stamp}"

    def collect(self, **settings) -> owned.OwnedCollect:
        config = Config()
        config.Exchange.root = str(self.tmp / "exchange")
        config.CourseDirectory.root = str(self.course)
        config.CourseDirectory.course_id = COURSE_ID
        for key, value in settings.items():
            setattr(config.CourseDirectory, key, value)
        coursedir = CourseDirectory(config=config)
        coursedir.assignment_id = LESSON
        put_interpreter_bin_on_path()  # a new gradebook runs alembic
        return owned.OwnedCollect(
            coursedir=coursedir, authenticator=Authenticator(config=config), config=config
        )

    def collected(self, who: str) -> str:
        return (self.course / "submitted" / who / LESSON / "l1.ipynb").read_text()

    def refused(self) -> dict[str, dict]:
        listed = json.loads((self.course / owned.REFUSED / f"{LESSON}.json").read_text())
        return {item["filename"]: item for item in listed}


def _plant_every_form(room: Room) -> dict[str, str]:
    """Each way to file what is not the learner's own, in the learner's name, all newer
    than the learner's real submission; return the planted names and the expected problem."""
    other = room.submission(OTHER, "OTHER's work")
    planted = {}

    def plant(path: Path, problem: str) -> None:
        _give(path, LEARNER)
        planted[path.name] = problem

    link = room.name(LEARNER)
    link.symlink_to(other)  # another learner's submitted folder
    plant(link, owned.LINK)
    link = room.name(LEARNER)
    link.symlink_to(room.course / "source" / LESSON)  # the instructor's source/ with solutions
    plant(link, owned.LINK)
    link = room.name(LEARNER)
    link.symlink_to(other / "l1.ipynb")  # a file
    plant(link, owned.LINK)
    inner = room.name(LEARNER)  # a real folder of the learner with a link inside
    inner.mkdir()
    (inner / "l1.ipynb").symlink_to(other / "l1.ipynb")
    plant(inner, owned.LINK)
    hard = room.name(LEARNER)  # a hard link to another user's file (in their home, say)
    hard.mkdir()
    (room.tmp / "others-file").write_text("OTHER's notes")
    os.link(room.tmp / "others-file", hard / "l1.ipynb")
    _give(hard, LEARNER)
    os.chown(hard / "l1.ipynb", *_ids(OTHER))  # the file stays the other user's (one inode)
    planted[hard.name] = owned.OTHER_OWNER
    theirs = room.submission(LEARNER, "OTHER's file in the learner's folder")
    os.chown(theirs / "l1.ipynb", *_ids(OTHER))  # a folder whose file another user owns
    planted[theirs.name] = owned.OTHER_OWNER
    second = room.submission(LEARNER, "the learner's own file, with a second name")
    os.link(second / "l1.ipynb", room.tmp / "second-name")
    planted[second.name] = owned.HARD_LINK
    fifo = room.name(LEARNER)
    fifo.mkdir()
    os.mkfifo(fifo / "l1.ipynb")
    plant(fifo, owned.NOT_PLAIN)
    made = room.submission(OTHER, "OTHER made it in the learner's name")
    claimed = room.name(LEARNER)
    made.rename(claimed)  # a folder another account made, in the learner's name
    planted[claimed.name] = owned.OWNER
    return planted


def test_every_form_of_another_ones_work_is_refused_and_listed(tmp_path):
    room = Room(tmp_path)
    room.submission(LEARNER, "the learner's own work")
    planted = _plant_every_form(room)
    room.collect().start()

    # The learner's own (older) submission is collected, nothing of the others' or source/.
    assert room.collected(LEARNER) == "the learner's own work"
    assert room.collected(OTHER) == "OTHER's work"
    refused = room.refused()
    assert {name: item["problem"] for name, item in refused.items()} == planted
    assert all(item["username"] == LEARNER for item in refused.values())
    assert not list(room.course.glob(".collecting-*"))  # the staging folder is gone
    collected = room.course / "submitted" / LEARNER / LESSON
    assert {path.name for path in collected.iterdir()} == {"l1.ipynb", "timestamp.txt"}
    assert not any(path.is_symlink() for path in collected.rglob("*"))
    # The export and the report say why, in both languages.
    item = next(i for i in refused.values() if i["problem"] == owned.LINK and i["path"] == "")
    reason = gradebook_rows._refusal(item, LEARNER, LEARNER)
    assert reason("en").startswith(f"refused at collect: {LEARNER}'s submission holds")
    assert "是符号链接" in reason("zh")


def test_a_link_swapped_in_after_the_check_is_refused_and_nothing_copied(tmp_path):
    room = Room(tmp_path)
    other = room.submission(OTHER, "OTHER's work")
    own = room.submission(LEARNER, "the learner's own work")
    collect = room.collect()
    collect.init_src()  # checked: the learner's own folder
    assert [r["filename"] for r in collect.src_records if r["username"] == LEARNER] == [own.name]
    (own / "l1.ipynb").unlink()
    (own / "l1.ipynb").symlink_to(other / "l1.ipynb")  # swapped in after the check
    collect.init_dest()
    collect.copy_files()
    assert not (room.course / "submitted" / LEARNER).exists()
    assert room.refused()[own.name]["problem"] == owned.LINK
    assert room.collected(OTHER) == "OTHER's work"


def test_a_link_swapped_in_between_look_and_open_fails_to_open(tmp_path, monkeypatch):
    """The narrowest race: after lstat, before open. O_NOFOLLOW fails on the link."""
    room = Room(tmp_path)
    other = room.submission(OTHER, "OTHER's work")
    own = room.submission(LEARNER, "the learner's own work")
    real_open = os.open

    def swapping_open(path, flags, *args, **kwargs):
        if path == "l1.ipynb" and not (own / "l1.ipynb").is_symlink():
            (own / "l1.ipynb").unlink()
            (own / "l1.ipynb").symlink_to(other / "l1.ipynb")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(owned.os, "open", swapping_open)
    with pytest.raises(owned.NotOwned) as refused:
        owned.copy_owned(str(own), _ids(LEARNER)[0], str(tmp_path / "copy"))
    monkeypatch.undo()
    assert refused.value.problem == owned.CHANGED and refused.value.path == "l1.ipynb"
    assert not (tmp_path / "copy" / "l1.ipynb").exists()


def test_an_update_keeps_the_collected_copy_when_the_newer_one_is_refused(tmp_path):
    room = Room(tmp_path)
    room.submission(LEARNER, "first")
    room.collect().start()
    newer = room.submission(LEARNER, "second")
    collect = room.collect()
    collect.update = True
    collect.init_src()
    shutil.rmtree(newer)
    newer.symlink_to(room.course / "source" / LESSON)  # swapped for a link after the check
    collect.init_dest()
    collect.copy_files()
    assert room.collected(LEARNER) == "first"
    assert room.refused()[newer.name]["problem"] == owned.LINK


def test_a_submission_bigger_than_max_dir_size_is_refused_not_fatal(tmp_path):
    room = Room(tmp_path)
    room.submission(OTHER, "x" * 200_000)
    room.submission(LEARNER, "small")
    deep = room.submission(LEARNER, "with a deep folder")  # deeper than any notebook needs
    nested = deep.joinpath(*["d"] * (owned.MAX_DEPTH + 1))
    nested.mkdir(parents=True)
    _give(deep, LEARNER)
    many = room.submission(LEARNER, "with many empty files")
    for k in range(owned.MAX_ENTRIES):
        (many / f"f{k}").touch()
    _give(many, LEARNER)
    room.collect(max_dir_size=100).start()  # kB, nbgrader's unit
    assert room.collected(LEARNER) == "small"
    refused = {item["filename"]: item for item in room.refused().values()}
    assert {(item["username"], item["problem"]) for item in refused.values()} == {
        (OTHER, owned.TOO_BIG),
        (LEARNER, owned.TOO_BIG),
    }
    assert len(refused) == 3


# Run as a learner: plant, in the learner's own name, each form of another one's work in
# the exchange's inbound (argv: inbound, lesson, stamp prefix, then the targets: another
# learner's submitted folder, the instructor's source/ of the lesson, a file); print the names.
_PLANT = """
import json, os, sys
inbound, lesson, prefix, folder, source, file = sys.argv[1:7]
me = os.environ["USER"]
names = {}
def name(i):
    return os.path.join(inbound, f"{me}+{lesson}+{prefix}:{i:02d}.000000 UTC+p{i}")
for i, (form, target) in enumerate(
    (("folder", folder), ("source", source), ("file", file)), start=1
):
    os.symlink(target, name(i))
    names[form] = os.path.basename(name(i))
os.mkdir(name(4))
os.symlink(file, os.path.join(name(4), lesson + ".ipynb"))
names["inner link"] = os.path.basename(name(4))
for i, form in ((5, "hard link"), (6, "other owner")):  # filled by root, and by the other
    os.mkdir(name(i))
    os.chmod(name(i), 0o777)
    names[form] = os.path.basename(name(i))
os.makedirs(os.path.join(name(7), "closed"))  # a folder collect may not enter: refused, and
open(os.path.join(name(7), "closed", "x"), "w").close()  # collect goes on with the others
os.chmod(os.path.join(name(7), "closed"), 0o600)
names["unreadable"] = os.path.basename(name(7))
print(json.dumps(names))
"""


def plant_every_form(made, learner: str, others: Path, source: Path, other: str) -> dict[str, str]:
    """In a real classroom ``made``, each form of _PLANT in ``learner``'s name, newer than
    her work: ``others`` is another learner's submission in the inbound (its notebook the
    file target), ``source`` the instructor's source/ of the lesson; the hard link made by
    root (protected_hardlinks keeps a learner from it) to ``other``'s fetched notebook, and
    ``other`` writes his file in the learner's open folder. The planted names, by form."""
    import time

    from classroom_hub import as_user

    inbound, lesson = others.parent, source.name
    notebook = f"{lesson}.ipynb"
    stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime(time.time() + 3600))
    targets = [str(others), str(source), str(others / notebook)]
    argv = [made.python, "-c", _PLANT, str(inbound), lesson, stamp, *targets]
    made_links = as_user(learner, argv, cwd=made.home(learner))
    assert made_links.returncode == 0, made_links.stderr[-3000:]
    planted = json.loads(made_links.stdout)
    os.link(made.home(other) / lesson / notebook, inbound / planted["hard link"] / notebook)
    theirs = inbound / planted["other owner"] / notebook
    argv = [made.python, "-c", f"open({str(theirs)!r}, 'w').write('bob')"]
    wrote = as_user(other, argv, cwd=made.home(other))
    assert wrote.returncode == 0, wrote.stderr[-3000:]
    return planted


def _inbound_of(room: Path, course: str, who: str) -> Path:
    (found,) = (room / "exchange" / course / "inbound").glob(f"{who}+*")
    return found


@pytest.mark.notebooks
def test_classroom_collect_with_real_learners(tmp_path):
    """A real classroom (throw-away accounts): alice plants each form in her own name, as
    herself (the hard link and bob's file in her folder as only root and bob can make them);
    the terminal's `nbgrader collect` and the formgrader's Collect (the instructor's Jupyter
    server, with the classroom's settings) refuse and list every one, and collect her own
    submission: nothing of bob's or of source/ reaches her collected folder."""
    import secrets
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request

    from classroom_hub import as_user, classroom, skip_unless_a_classroom_can_run, throwaway_users
    from processes import free_port, stop_group, venv_env

    from autograder.classroom.setup import CONFIG_ROOT, INSTRUCTOR_ONLY

    skip_unless_a_classroom_can_run()
    lesson = "01_requires_grad"
    notebook = f"{lesson}.ipynb"
    prefix = f"cc{secrets.token_hex(3)}"
    teacher, alice, bob = (f"{prefix}{role}" for role in ("t", "a", "b"))
    # bob comes from the class list (Moodle's columns), with his names and e-mail.
    listed = tmp_path / "class.csv"
    listed.write_text(f"Username,First name,Surname,Email address\n{bob},Bob,Jones,b@x.org\n")
    # setup makes bob's account from the class list: removed at the end like the others
    with (
        throwaway_users([bob]),
        classroom("collect", teacher, [alice], setup_args=("--roster", str(listed))) as made,
    ):
        room, python = made.room, made.python
        en = made.home(teacher) / "autograd-course-en"
        course = en.name
        from nbgrader.api import Gradebook

        from autograder.course import gradebook_url

        with Gradebook(gradebook_url(en)) as gradebook:
            registered = {s.id: (s.first_name, s.last_name, s.email) for s in gradebook.students}
        assert registered == {alice: (None, None, None), bob: ("Bob", "Jones", "b@x.org")}
        assert (en / "gradebook.db").stat().st_uid == pwd.getpwnam(teacher).pw_uid

        def run(user: str, *argv: str, cwd: Path) -> str:
            done = as_user(user, [python, *argv], cwd=cwd)
            assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
            return done.stdout + done.stderr

        # What holds answers is closed to learners by setup itself (issue 35 item 7).
        for closed in INSTRUCTOR_ONLY:
            probe = as_user(
                alice,
                [python, "-c", f"import os; os.listdir({str(closed)!r})"],
                cwd=made.home(alice),
            )
            assert "PermissionError" in probe.stderr, (closed, probe.stderr[-500:])
        run(teacher, "-m", "nbgrader", "release_assignment", lesson, cwd=en)
        for learner in (alice, bob):
            home = made.home(learner)
            run(learner, "-m", "nbgrader", "fetch_assignment", lesson, cwd=home)
            path = home / lesson / notebook
            marked = json.loads(path.read_text())
            marked["metadata"]["who"] = f"{learner}'s own work"
            path.write_text(json.dumps(marked))
            run(learner, "-m", "nbgrader", "submit", lesson, cwd=home)
        bobs = _inbound_of(room, course, bob)
        alices = _inbound_of(room, course, alice)
        planted = plant_every_form(made, alice, bobs, en / "source" / lesson, bob)
        own = (alices / notebook).read_bytes()
        secret = (en / "source" / lesson / notebook).read_bytes()

        def outcome() -> None:
            collected = en / "submitted" / alice / lesson
            assert (collected / notebook).read_bytes() == own
            assert (en / "submitted" / bob / lesson / notebook).read_bytes() != own
            for path in collected.rglob("*"):
                assert not path.is_symlink() and path.stat().st_nlink == 1, path
                assert path.is_dir() or path.read_bytes() not in (secret, b"bob"), path
                assert path.lstat().st_uid == pwd.getpwnam(teacher).pw_uid, path
            refused = json.loads((en / owned.REFUSED / f"{lesson}.json").read_text())
            assert {item["filename"] for item in refused} == set(planted.values()), refused
            assert {item["username"] for item in refused} == {alice}
            problems = {item["filename"]: item["problem"] for item in refused}
            assert problems[planted["unreadable"]] == owned.UNREADABLE, refused
            assert problems[planted["folder"]] == owned.LINK, refused

        said = run(teacher, "-m", "nbgrader", "collect", lesson, cwd=en)
        assert said.count("Refused") == len(planted), said
        outcome()

        # The formgrader's Collect: the instructor's server as the hub starts it.
        shutil.rmtree(en / "submitted")
        shutil.rmtree(en / owned.REFUSED)
        port, token = free_port(), secrets.token_hex(16)
        account = pwd.getpwnam(teacher)
        env_root = made.env  # the environment as the instructor reaches it
        environment = {
            "PATH": f"{Path(python).parent}:{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": account.pw_dir,
            "USER": teacher,
            "JUPYTER_CONFIG_PATH": f"{CONFIG_ROOT}/classroom-instructor:{env_root}/etc/jupyter",
            "JUPYTER_PATH": f"{env_root}/share/jupyter",
            "COURSE_CLASSROOM": str(room),
        }
        argv = [python, "-m", "jupyter_server", "--no-browser", f"--ServerApp.port={port}"]
        argv += ["--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}"]
        log = tmp_path / "server.log"
        with open(log, "wb") as output:
            server = subprocess.Popen(
                argv,
                cwd=account.pw_dir,
                env=environment,
                user=account.pw_uid,
                group=account.pw_gid,
                extra_groups=[],
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        url = f"http://127.0.0.1:{port}/formgrader/api/assignment/{lesson}/collect"
        request = urllib.request.Request(
            url, data=b"", method="POST", headers={"Authorization": f"token {token}"}
        )
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    with urllib.request.urlopen(request, timeout=300) as response:
                        answer = json.loads(response.read())
                    break
                except (urllib.error.URLError, ConnectionError):
                    assert server.poll() is None and time.monotonic() < deadline, log.read_text()
                    time.sleep(0.5)
        finally:
            stop_group(server)
        assert answer["success"], answer
        assert answer["log"].count("Refused") == len(planted), answer["log"]
        outcome()

        # The class list's names and e-mail reach the Canvas and Moodle files.
        exported = subprocess.run(
            [sys.executable, "-m", "autograder.grader.cli", "export", str(en), lesson],
            env=venv_env(),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert exported.returncode == 0, exported.stderr[-3000:]
        grading = en / "grading"
        assert f"{bob},b@x.org," in (grading / f"{lesson}-moodle.csv").read_text()
        assert '"Jones, Bob"' in (grading / f"{lesson}-canvas.csv").read_text()
