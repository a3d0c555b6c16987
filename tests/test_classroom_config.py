"""The classroom's JupyterHub configuration, read as JupyterHub reads it (fast, no hub started)."""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import REPO
from traitlets.config.loader import PyFileConfigLoader

from autograder.classroom import accounts, cluster, hub_config, passwords, setup

DEFAULTS = hub_config.Listen()
DEFAULT_LIMITS = hub_config.Limits()


def _load(tmp_path: Path, listen=DEFAULTS, limits=DEFAULT_LIMITS):
    text = hub_config.render(
        tmp_path,
        listen,
        Path(sys.executable).parent,
        Path(sys.executable),
        setup.CONFIG_ROOT,
        "teacher",
        ["alice", "chen"],
        limits,
    )
    (tmp_path / "jupyterhub_config.py").write_text(text, encoding="utf-8")
    return PyFileConfigLoader("jupyterhub_config.py", path=str(tmp_path)).load_config()


def _spawner(name: str):
    return SimpleNamespace(user=SimpleNamespace(name=name))


def test_the_hub_listens_on_loopback_unless_told(tmp_path):
    config = _load(tmp_path)
    assert config.JupyterHub.ip == "127.0.0.1"
    assert config.JupyterHub.hub_ip == "127.0.0.1"
    assert config.ConfigurableHTTPProxy.api_url.startswith("http://127.0.0.1:")
    wide = _load(tmp_path, hub_config.Listen(ip="0.0.0.0", port=9000))
    assert (wide.JupyterHub.ip, wide.JupyterHub.port) == ("0.0.0.0", 9000)
    assert wide.JupyterHub.hub_ip == "127.0.0.1"


def test_each_person_logs_in_to_their_own_account(tmp_path):
    config = _load(tmp_path)
    assert config.JupyterHub.authenticator_class == "pam"
    assert "DummyAuthenticator" not in config  # no password that opens every account
    assert config.Authenticator.allowed_users == {"teacher", "alice", "chen"}
    assert config.Authenticator.admin_users == {"teacher"}


def test_setup_gives_each_new_account_its_own_password_listed_for_root_only(tmp_path, monkeypatch):
    changed = []
    monkeypatch.setattr(passwords, "_set", lambda name, password: changed.append(name))
    first = passwords.give(tmp_path, {"teacher": "instructor", "alice": "autograd-course-en"})
    assert changed == ["teacher", "alice"] and first["teacher"] != first["alice"]
    assert (tmp_path / passwords.FILE).stat().st_mode & 0o777 == 0o600
    again = passwords.give(tmp_path, {"alice": "autograd-course-en", "chen": "autograd-course-zh"})
    assert list(again) == ["chen"] and changed == ["teacher", "alice", "chen"]
    assert passwords.handed_out(tmp_path) == first | again


def test_each_role_gets_its_lab_set_up(tmp_path):
    config = _load(tmp_path)
    assert config.Spawner.cmd == [sys.executable, "-m", "jupyterhub.singleuser"]
    path = config.Spawner.environment["JUPYTER_CONFIG_PATH"]
    instructor = path(_spawner("teacher")).split(":")[0]
    learner = path(_spawner("alice")).split(":")[0]
    assert instructor.endswith("classroom-instructor") and learner.endswith("classroom-learner")
    for folder in (instructor, learner):
        assert (Path(folder) / "jupyter_server_config.py").is_file()
    disabled = json.loads((Path(learner) / "labconfig" / "page_config.json").read_text())
    assert disabled["disabledExtensions"]["@jupyter/nbgrader:formgrader"] is True
    assert "@jupyter/nbgrader:assignment-list" not in disabled["disabledExtensions"]
    assert not (Path(instructor) / "labconfig").exists()
    assert Path(setup.CONFIG_ROOT) == REPO / "jupyter-config"


def test_only_portable_user_names():
    assert accounts.valid_name("alice") and accounts.valid_name("ct0a1b2ct")
    for bad in ("Alice", "1abc", "a b", "../x", "a" * 33, ""):
        assert not accounts.valid_name(bad), bad


def test_feedback_carries_what_release_feedback_needs_as_plain_data(tmp_path):
    from autograder.grader.reports import feedback

    submitted, folder = tmp_path / "submitted", tmp_path / "feedback"
    submitted.mkdir()
    folder.mkdir()
    (submitted / "timestamp.txt").write_text("2026-11-30 06:30:30.419951 UTC")
    (tmp_path / "elsewhere").write_text("not the learner's")
    (submitted / "submission_secret.txt").symlink_to(tmp_path / "elsewhere")
    feedback._copy_release_files(submitted, folder)
    assert (folder / "timestamp.txt").read_text() == "2026-11-30 06:30:30.419951 UTC"
    assert (folder / "timestamp.txt").stat().st_mode & 0o777 == 0o644
    assert not (folder / "submission_secret.txt").exists()  # a link is not copied


def test_the_grading_cluster_admits_only_holders_of_the_classroom_certificate(tmp_path):
    import asyncio
    import pwd

    from distributed import Client, Scheduler
    from distributed.security import Security

    folder = tmp_path / "cluster"
    cluster.make_certificate(folder, pwd.getpwuid(os.getuid()))
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / cluster.KEY).stat().st_mode & 0o777 == 0o600
    ours = cluster.security(folder)

    async def connects(address: str, security) -> bool:
        try:
            async with Client(address, security=security, asynchronous=True, timeout=10):
                return True
        except (OSError, TypeError):  # TypeError: tls:// without any certificate
            return False

    async def attempts():
        async with Scheduler(
            host="127.0.0.1", port=0, protocol="tls", security=ours, dashboard_address=None
        ) as scheduler:
            address = scheduler.address
            plain = address.replace("tls://", "tcp://")
            assert address.startswith("tls://127.0.0.1:")
            return [
                await connects(address, ours),
                await connects(address, Security.temporary()),
                await connects(address, None),
                await connects(plain, None),
            ]

    assert asyncio.run(attempts()) == [True, False, False, False]


def test_a_python_too_old_for_an_installed_package_is_refused_with_the_reason(
    tmp_path, monkeypatch
):
    from autograder.classroom import interpreter

    # Nothing is refused for the exact version the packages were installed with.
    assert interpreter.unmet_requirements(platform.python_version()) == []
    # An installed package that needs a newer patch release (as soupsieve needs 3.11.5) ...
    packages = tmp_path / "site-packages"
    info = packages / "needs_newer-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: needs-newer\nVersion: 1.0\n"
        f"Requires-Python: >={interpreter.VERSION}.5\n"
    )
    monkeypatch.syspath_prepend(str(packages))
    # ... and a system Python of the course's minor version, older than that (Debian's 3.11.2).
    old = tmp_path / "python"
    old.write_text(f"#!/bin/sh\necho {interpreter.VERSION}.2\n")
    old.chmod(0o755)
    with pytest.raises(interpreter.InterpreterError) as refused:
        interpreter.bridge(old, tmp_path / "bridge")
    assert f"Python {interpreter.VERSION}.2" in str(refused.value)
    assert f"needs-newer (needs Python >={interpreter.VERSION}.5)" in str(refused.value)
    assert not (tmp_path / "bridge").exists()


def test_nbgraders_own_autograde_and_feedback_send_the_instructor_to_course_grade(
    tmp_path, monkeypatch
):
    import nbformat
    from nbgrader.apps import NbGraderAPI

    course = tmp_path / "course"
    for folder in ("submitted", "autograded"):
        (course / folder / "alice" / "l1").mkdir(parents=True)
        nbformat.write(nbformat.v4.new_notebook(), course / folder / "alice/l1/l1.ipynb")
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    settings = tmp_path / "instructor_nbgrader_config.py"
    settings.write_text(setup._INSTRUCTOR_NBGRADER, encoding="utf-8")
    monkeypatch.chdir(course)  # where the instructor runs nbgrader: the course's own folder
    config = PyFileConfigLoader(settings.name, path=str(tmp_path)).load_config()
    config.CourseDirectory.root = str(course)
    api = NbGraderAPI(config=config)
    graded = api.autograde("l1", "alice")
    assert not graded["success"] and "course-grade grade" in graded["error"], graded
    feedback = api.generate_feedback("l1", "alice")
    assert not feedback["success"] and "course-grade feedback" in feedback["error"], feedback
    # Refused before nbgrader touched anything: the graded notebook stays, no feedback.
    assert (course / "autograded/alice/l1/l1.ipynb").is_file()
    assert not (course / "feedback").exists()


def _post(url: str, token: str) -> dict:
    import urllib.request

    request = urllib.request.Request(
        url, data=b"", method="POST", headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def test_the_instructors_formgrader_autograde_and_feedback_run_course_grade(tmp_path):
    """The instructor's Jupyter server as the hub starts it (their jupyter-config folder,
    COURSE_CLASSROOM): the formgrader's Autograde runs `course-grade grade` of that one
    submission on the classroom's cluster, never nbgrader's autograde; Generate Feedback runs
    `course-grade feedback`. (The classroom test grades through it for real.)"""
    import secrets
    import subprocess
    import time
    import urllib.error

    import nbformat
    from processes import free_port, stop_group, venv_env

    room, course = tmp_path / "room", tmp_path / "course"
    (room / "cluster").mkdir(parents=True)
    (course / "submitted" / "alice" / "l1").mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(), course / "submitted/alice/l1/l1.ipynb")
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n"
    )
    (tmp_path / "home").mkdir()
    port, token = free_port(), secrets.token_hex(16)
    environment = venv_env(
        JUPYTER_CONFIG_PATH=str(setup.CONFIG_ROOT / "classroom-instructor"),
        HOME=str(tmp_path / "home"),
        COURSE_CLASSROOM=str(room),
    )
    argv = [str(Path(sys.executable).parent / "jupyter-server"), "--allow-root", "--no-browser"]
    argv += [f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1"]
    argv += [f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={course}"]
    with open(tmp_path / "server.log", "wb") as log:
        server = subprocess.Popen(
            argv,
            cwd=course,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    api = f"http://127.0.0.1:{port}/formgrader/api"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                _post(f"{api}/submission/l1/nobody/autograde", token)
                break
            except (urllib.error.URLError, ConnectionError):
                assert server.poll() is None and time.monotonic() < deadline, (
                    tmp_path / "server.log"
                ).read_text()[-3000:]
                time.sleep(0.5)
        # No cluster running: refused, naming how to start it; nothing graded.
        refused = _post(f"{api}/submission/l1/alice/autograde", token)
        assert not refused["success"] and "course-classroom cluster" in refused["error"], refused
        assert "评分集群" in refused["error"]
        # A name that is no collected submission runs nothing.
        for url in (
            f"{api}/submission/l1/..%2Falice/autograde",
            f"{api}/submission/l2/alice/autograde",
        ):
            assert "No collected submission" in _post(url, token)["error"], url
        # With the cluster's address beside its certificate, course-grade grades on it.
        address = f"tls://127.0.0.1:{free_port()}"
        (room / "cluster" / cluster.ADDRESS).write_text(address + "\n")
        ran = _post(f"{api}/submission/l1/alice/autograde", token)
        assert f"Grading 1 submissions of l1 (Dask at {address}" in ran["log"], ran
        assert "cgroup: the workers'" in ran["log"], ran
        assert not (course / "autograded").exists()  # nbgrader's autograde never ran
        feedback = _post(f"{api}/assignment/l1/alice/generate_feedback", token)
        # course-grade's own answer (nothing autograded yet), not nbgrader's refusal
        assert feedback["success"] and "Wrote feedback for 0 submissions" in feedback["log"]
    finally:
        stop_group(server)


@pytest.mark.skipif(os.geteuid() != 0, reason="changes files' owners: needs root")
def test_what_root_writes_in_an_instructors_course_becomes_the_instructors(tmp_path):
    import pwd

    from autograder.grader.pipeline import ownership

    nobody = pwd.getpwnam("nobody")
    course = tmp_path / "course"
    (course / "grading" / "records").mkdir(parents=True)
    os.chown(course, nobody.pw_uid, nobody.pw_gid)
    (course / "grading" / "records" / "alice.json").write_text("{}")
    outside = tmp_path / "root-only"
    outside.write_text("root's")
    os.link(outside, course / "grading" / "planted-link")
    (course / "grading" / "planted-symlink").symlink_to(outside)
    ownership.give_to_course_owner(course)
    for path in (course / "grading", course / "grading/records/alice.json"):
        assert (path.stat().st_uid, path.stat().st_gid) == (nobody.pw_uid, nobody.pw_gid), path
    assert outside.stat().st_uid == 0  # neither a second name nor a link hands it over


def test_a_bridged_python_brings_the_environments_commands(tmp_path):
    import subprocess

    from autograder.classroom import interpreter

    base = Path(sys.base_prefix) / "bin" / f"python{interpreter.VERSION}"
    python = interpreter.bridge(base, tmp_path / "bridge")
    nbgrader = python.parent / "nbgrader"
    assert nbgrader.read_text().startswith(f"#!{python}\n")
    ran = subprocess.run(
        [str(nbgrader), "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0 and ran.stdout.strip(), ran.stderr[-2000:]
    assert (python.parent / "course-grade").is_file()


def test_setup_gives_its_users_a_python_of_its_own_when_they_cannot_run_this_one():
    """Where the course's Python lies in root's private home (pyenv, as here) and the system's
    is too old, setup copies the course's base Python into the classroom and bridges it to the
    course's packages (issue 35 item 4); every account runs it; setup again keeps it."""
    import pwd
    import tempfile

    from processes import skip_where_others_cannot_enter

    from autograder.classroom import interpreter

    if os.geteuid() != 0:
        pytest.skip("runs the interpreter as another user: needs root")
    skip_where_others_cannot_enter()
    nobody = pwd.getpwnam("nobody")
    folder = Path(tempfile.mkdtemp(prefix="classroom-python-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        base = interpreter.copy_base(folder / "python-base")
        assert base.stat().st_mode & 0o005 == 0o005 and base.parent.parent == folder / "python-base"
        python = interpreter.bridge(base, folder / "python")
        assert interpreter.runs_as(python, nobody)
        made = (folder / "python" / "pyvenv.cfg").stat()
        if interpreter.runs_as(Path(sys.executable), nobody):
            return  # this Python is open to all: for_users would take it as it is
        assert interpreter.for_users(folder, nobody, None) == python  # the earlier one, kept
        assert interpreter.for_users(folder, nobody, base) == python
        assert (folder / "python" / "pyvenv.cfg").stat().st_ino == made.st_ino
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _feedback_page(lang: str, pending: bool) -> str:
    """A page as `course-grade feedback` renders it: a test cell and a written answer."""
    import nbformat
    from nbgrader.converters import GenerateFeedback
    from traitlets.config import Config

    from autograder.grader.reports import feedback

    test = nbformat.v4.new_code_cell("assert True")
    test.metadata.nbgrader = {"grade": True, "grade_id": "t1", "points": 2, "score": 2.0}
    written = nbformat.v4.new_markdown_cell("Because the graph is freed.")
    written.metadata.nbgrader = {
        "grade": True,
        "solution": True,
        "grade_id": "w1",
        "points": 2,
        "score": 0.0,
        "pending": pending,
    }
    nb = nbformat.v4.new_notebook(cells=[test, written])
    config = Config()
    config.CourseFeedbackExporter.language = lang
    # nbgrader's own template folders, as GenerateFeedback sets them up
    config.merge(GenerateFeedback(config=config).config)
    exporter = feedback.CourseFeedbackExporter(config=config)
    about = {"notebook": "n", "score": 2.0, "max_score": 4, "late_penalty": 0}
    resources = {"nbgrader": about | {"pending": 2 if pending else 0}}
    page, _ = exporter.from_notebook_node(nb, resources=resources)
    return page


def test_feedback_frame_is_in_the_course_language_and_a_hand_grade_is_pending_not_zero():
    page = _feedback_page("zh", pending=True)
    assert "得分: 2.0 / 4.0" in page and "还有 2.0 分待教师人工评分" in page
    assert "待人工评分 / 2.0" in page and "简答题" in page and "你的作答" in page
    for english in ("Score:", "Student's answer", "Written response", "(Top)"):
        assert english not in page, english
    graded = _feedback_page("en", pending=False)
    assert "Score: 0.0 / 2.0" in graded and "pending" not in graded


def test_the_report_names_refused_submissions_and_draws_no_empty_axes(tmp_path):
    from nbgrader.api import Gradebook

    from autograder.course import put_interpreter_bin_on_path
    from autograder.grader.reports import report

    course = tmp_path / "course"
    (course / "grading" / "refused").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text('c.CourseDirectory.course_id = "autograd-course-zh"')
    refused = [
        {"username": "bob", "owner": "alice", "timestamp": "2026-12-01 10:00:00"},
        # carol's own account planted a link (classroom/owned.py): not her own work
        {"username": "carol", "owner": "carol", "timestamp": "2026-12-01 10:05:00"}
        | {"problem": "link", "path": "l1.ipynb"},
    ]
    (course / "grading" / "refused" / "l1.json").write_text(json.dumps(refused))
    put_interpreter_bin_on_path()  # a new gradebook runs alembic, beside this Python
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment("l1")
    page = report.write(course, "l1").read_text(encoding="utf-8")
    assert "<tr><td>bob</td><td>l1</td><td>收取时被拒：不是该学生本人的作业</td>" in page
    assert "alice" in page  # who made it
    assert "carol 的提交中含有不属于 carol 本人的内容（l1.ipynb 是符号链接）" in page
    assert "没有发现常见误区" in page and "data:image/png" not in page  # sentences, no empty axes


def test_each_language_of_a_report_has_its_own_file(tmp_path):
    """The Chinese term report of an English course no longer replaces the English one."""
    from nbgrader.api import Gradebook

    from autograder.course import put_interpreter_bin_on_path
    from autograder.grader.reports import report

    course = tmp_path / "course"
    (course / "source" / "l1").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text('c.CourseDirectory.course_id = "autograd-course-en"')
    put_interpreter_bin_on_path()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.add_assignment("l1")
    for assignment, name in ((None, "term"), ("l1", "l1")):
        english = report.write(course, assignment)
        chinese = report.write(course, assignment, lang="zh")
        assert english == course / "grading" / f"{name}-report.html"
        assert chinese == course / "grading" / f"{name}-report-zh.html"
        assert report.write(course, assignment, lang="en") == english  # the course's own
        assert '<html lang="en"' in english.read_text(encoding="utf-8")
        assert '<html lang="zh' in chinese.read_text(encoding="utf-8")


@pytest.mark.parametrize("role", ["instructor", "learner"])
def test_everyones_terminal_keeps_the_course_path(tmp_path, role):
    """A Lab terminal runs the shell the role's settings name; given the hub's PATH (the
    course's commands first), it still has it: not a login shell, whose /etc/profile would
    replace it (issue 35 item 7: learners' python, nbgrader "not found")."""
    import subprocess

    folder = setup.CONFIG_ROOT / f"classroom-{role}"
    config = PyFileConfigLoader("jupyter_server_config.py", path=str(folder)).load_config()
    shell = config.ServerApp.terminado_settings["shell_command"]
    assert "-l" not in shell and "--login" not in shell, shell
    course_bin = str(Path(sys.executable).parent)
    path = f"{course_bin}:/usr/local/bin:/usr/bin:/bin"
    ran = subprocess.run(
        shell,
        input='echo "PATH=$PATH"; command -v nbgrader; exit\n',
        env={"PATH": path, "HOME": str(tmp_path), "SHELL": shell[0]},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert f"PATH={path}" in ran.stdout, ran.stdout + ran.stderr
    assert f"{course_bin}/nbgrader" in ran.stdout, ran.stdout + ran.stderr


def test_a_class_list_as_canvas_or_moodle_export_it(tmp_path):
    from autograder.classroom import roster

    canvas = tmp_path / "canvas.csv"
    canvas.write_text(
        "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Language\n"
        "    Points Possible,,,,,\n"
        '"Smith, Alice",101,,alice,,en\n'
        '"李, 婷",102,,chen,,中文\n',
        encoding="utf-8",
    )
    assert roster.read(canvas) == [
        roster.Learner("alice", "en", "Alice", "Smith", "", "101"),
        roster.Learner("chen", "zh", "婷", "李", "", "102"),
    ]
    moodle = tmp_path / "moodle.csv"
    moodle.write_text(
        "First name;Surname;Username;Email address;ID number\nBob;Jones;bob;bob@example.org;B7\n",
        encoding="utf-8",
    )
    (bob,) = roster.read(moodle, default_lang="zh")
    assert bob == roster.Learner("bob", "zh", "Bob", "Jones", "bob@example.org", "B7")
    for text, said in (
        ("name,email\nAlice,a@example.org\n", "no column of log-in names"),
        ("username\nAlice@Uni\n", "row 2: 'Alice@Uni' is not a portable Unix user name"),
        ("username,language\nalice,fr\n", "language 'fr' is neither"),
        ("username\nalice\nalice\n", "row 3: 'alice' is listed twice"),
    ):
        bad = tmp_path / "bad.csv"
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(roster.RosterError, match=said):
            roster.read(bad)


def test_setup_registers_the_class_lists_names_in_each_learners_course(tmp_path):
    from nbgrader.api import Gradebook

    from autograder import course
    from autograder.classroom import roster

    roots = {lang: tmp_path / setup.course_id(lang) for lang in setup.LANGUAGES}
    for root in roots.values():
        root.mkdir()
    room = setup.Classroom(
        tmp_path, "teacher", {"alice": "en", "chen": "zh", "dan": "en"}, {}, DEFAULTS, Path()
    )
    names = {
        "alice": roster.Learner("alice", "en", "Alice", "Smith", "alice@example.org", "101"),
        "chen": roster.Learner("chen", "zh", "婷", "李", "chen@example.org"),
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(setup.Classroom, "course", lambda self, lang: roots[lang])
        setup.register_learners(room, None, names)
    with Gradebook(course.gradebook_url(roots["en"])) as gradebook:
        alice = gradebook.find_student("alice")
        assert (alice.first_name, alice.last_name, alice.email, alice.lms_user_id) == (
            "Alice",
            "Smith",
            "alice@example.org",
            "101",
        )
        assert gradebook.find_student("dan").first_name is None  # on no list: no names
        assert sorted(s.id for s in gradebook.students) == ["alice", "dan"]
    with Gradebook(course.gradebook_url(roots["zh"])) as gradebook:
        assert [(s.id, s.last_name, s.first_name) for s in gradebook.students] == [
            ("chen", "李", "婷")
        ]


# Run as a client of the cluster: where its scheduler's and workers' HTTP listeners are.
_HTTP_PORTS = """
import json, sys
from distributed import Client
from autograder.classroom import cluster
from pathlib import Path

def ports(server):
    return [s.getsockname()[:2] for s in server.http_server._sockets.values()]

with Client(sys.argv[1], security=cluster.security(Path(sys.argv[2])), timeout=60) as client:
    found = {"scheduler": client.run_on_scheduler(lambda dask_scheduler: ports(dask_scheduler))}
    found |= client.run(lambda dask_worker: ports(dask_worker))
print(json.dumps(found))
"""


def test_the_grading_cluster_serves_no_http_pages_and_takes_no_fixed_port(tmp_path):
    """Dask's dashboard and info pages (logs, tasks, stacks) have no authentication: the
    classroom's cluster serves none, on ports the system picks (issue 35 item 3)."""
    import pwd
    import subprocess
    import urllib.error
    import urllib.request

    from processes import free_port, stop_group, venv_env

    folder = tmp_path / "cluster"
    cluster.make_certificate(folder, pwd.getpwuid(os.getuid()))
    port = free_port()
    argv = [sys.executable, "-m", "autograder.classroom.cluster", str(folder), "1"]
    argv += ["127.0.0.1", str(port)]
    log = tmp_path / "cluster.log"
    with open(log, "wb") as output:
        server = subprocess.Popen(
            argv, env=venv_env(), stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        import time

        deadline = time.monotonic() + 120
        while "Dask scheduler at" not in log.read_text():
            assert server.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        address = f"tls://127.0.0.1:{port}"
        asked = subprocess.run(
            [sys.executable, "-c", _HTTP_PORTS, address, str(folder)],
            env=venv_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert asked.returncode == 0, asked.stderr[-3000:]
        listeners = json.loads(asked.stdout)
        assert len(listeners) == 2, listeners  # the scheduler and its one worker
        for where in listeners.values():
            for host, http_port in where:
                assert host == "127.0.0.1" and http_port != 8787, listeners
                for page in ("status", "info/main/workers.html", "logs", "health", "metrics"):
                    try:
                        with urllib.request.urlopen(
                            f"http://127.0.0.1:{http_port}/{page}", timeout=10
                        ) as response:
                            status = response.status
                    except urllib.error.HTTPError as error:
                        status = error.code
                    assert status == 404, (page, status)
    finally:
        stop_group(server)


def test_learners_servers_start_in_namespaces_of_their_own(tmp_path):
    config = _load(tmp_path)
    hook = config.Spawner.pre_spawn_hook
    for name, wrapped in (("alice", True), ("teacher", False), ("alice", True)):
        spawner = SimpleNamespace(user=SimpleNamespace(name=name), cmd=None)
        hook(spawner)  # the hub calls it before every start: never wrapped twice
        wrapper = [sys.executable, "-m", "autograder.classroom.own_pids"]
        wrapper += ["--tmp-mb", str(hub_config.Limits.tmp_mb), "--"]
        assert spawner.cmd == (wrapper if wrapped else []) + config.Spawner.cmd, spawner.cmd


def _own_pids(argv: list[str], **kwargs):
    """``own_pids -- ARGV`` as this user, started in a new session (a learner's server runs
    it as the learner: tests/test_classroom_servers.py)."""
    import subprocess

    from processes import venv_env

    wrapper = [sys.executable, "-m", "autograder.classroom.own_pids", "--tmp-mb", "8", "--"]
    return subprocess.Popen(
        kwargs.pop("prefix", []) + wrapper + argv,
        cwd=kwargs.pop("cwd", "/"),
        env=venv_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kwargs,
    )


# Run under own_pids: which processes it sees, who it is, and then wait for SIGTERM.
_SEES = """
import json, os, signal, subprocess, sys, time
subprocess.Popen(["sleep", sys.argv[1]], start_new_session=True)  # an orphan it leaves
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a clean stop, as the hub asks
seen = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps({"pids": seen, "me": os.getpid(), "uid": os.getuid()}), flush=True)
time.sleep(120)
sys.exit(3)
"""


def test_a_learners_server_sees_its_own_processes_only_and_stops_with_its_orphans(tmp_path):
    import secrets
    import subprocess

    from processes import stop_group

    marker = f"{100000 + secrets.randbelow(800000)}"  # the orphan's sleep, found by it
    server = _own_pids([sys.executable, "-c", _SEES, marker])
    try:
        seen = json.loads(server.stdout.readline() or "{}")
        if not seen:
            pytest.skip(f"no namespaces here: {server.stderr.read()[-500:]}")
        # PID 1 the init, the server 2, its orphan 3: nobody else's, not even its wrapper.
        assert seen["me"] == 2 and seen["pids"] == [1, 2, 3], seen
        assert seen["uid"] == os.getuid()  # still the same user
        os.kill(server.pid, signal.SIGTERM)  # the hub stops the server through the wrapper
        assert server.wait(timeout=60) == 0, server.stderr.read()
        left = subprocess.run(["pgrep", "-f", f"^sleep {marker}$"], capture_output=True)
        assert left.returncode == 1, left.stdout  # the orphan ended with the server
    finally:
        stop_group(server)
        server.stdout.close()
        server.stderr.close()


# Run under own_pids --tmp-mb 8, in a folder of the machine's /tmp: what /tmp holds.
_TMP = """
import json, os, sys
found = {"marker": os.path.exists(sys.argv[1]), "cwd": os.listdir(".")}
with open("written-by-the-server", "w") as handle:  # its folder under /tmp is the real one
    handle.write("ok")
try:
    with open("/tmp/big", "wb") as handle:
        handle.write(b"x" * 20 * 1024**2)
    found["big"] = "written"
except OSError as error:
    found["big"] = error.strerror
print(json.dumps(found))
"""


def test_a_learners_server_gets_a_small_tmp_of_its_own_and_keeps_its_folders(tmp_path):
    import secrets

    marker = Path("/tmp") / f"own-pids-marker-{secrets.token_hex(4)}"
    marker.write_text("another user's file in the machine's /tmp")
    (tmp_path / "mine").write_text("")
    try:
        server = _own_pids([sys.executable, "-c", _TMP, str(marker)], cwd=tmp_path)
        out, err = server.communicate(timeout=60)
    finally:
        marker.unlink()
    assert server.returncode == 0, err
    found = json.loads(out)
    assert found == {"marker": False, "cwd": ["mine"], "big": "No space left on device"}, found
    assert (tmp_path / "written-by-the-server").read_text() == "ok"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_where_namespaces_are_refused_the_server_runs_as_it_is_and_says_why(tmp_path):
    # bubblewrap's --disable-userns: no further user namespace inside, as on a machine
    # with user.max_user_namespaces = 0.
    prefix = ["bwrap", "--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--"]
    server = _own_pids(["echo", "server ran"], prefix=prefix)
    out, err = server.communicate(timeout=60)
    if "bwrap:" in err:
        pytest.skip(f"bubblewrap cannot run here: {err[-300:]}")
    assert server.returncode == 0 and out == "server ran\n", (out, err)
    assert "own_pids: the server sees every user's processes" in err, err


def test_every_server_is_bounded_by_the_classrooms_limits(tmp_path):
    from autograder.classroom.spawner import BoundedSpawner

    config = _load(tmp_path)
    assert config.JupyterHub.spawner_class == "autograder.classroom.spawner.BoundedSpawner"
    spawner = BoundedSpawner(config=config)
    assert spawner.mem_limit == 4 * 1024**3 and spawner.processes == 1024
    # A learner's server gets one core's time; the instructor's grading uses every core.
    uncapped = _load(tmp_path, limits=hub_config.Limits(cpus=0))  # 0: no limit
    for name, cpus, loaded in (
        ("alice", 1.0, config),
        ("teacher", None, config),
        ("chen", 1.0, config),
        ("alice", None, uncapped),
    ):
        spawner = SimpleNamespace(user=SimpleNamespace(name=name), cmd=None, cpu_limit=None)
        loaded.Spawner.pre_spawn_hook(spawner)
        assert spawner.cpu_limit == cpus, name


# A learner's code in a bounded server: allocate and touch MiB, or start processes.
_GREEDY = """
import os, sys, time
what, amount = sys.argv[1], int(sys.argv[2])
if what == "memory":
    block = bytearray(amount * 1024**2)
    for i in range(0, len(block), 4096):
        block[i] = 1
    print("allocated", flush=True)
elif what == "cpu":  # two busy processes for ``amount`` tenths of a second: CPU seconds used
    start, child = time.monotonic(), os.fork()
    while time.monotonic() - start < amount / 10:
        pass
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    used = os.times()
    print(round(used.user + used.system + used.children_user + used.children_system, 2))
else:
    children = []
    try:
        for _ in range(amount):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
        print("forked all", flush=True)
    except OSError as error:
        print("refused", type(error).__name__, len(children), flush=True)
    for pid in children:
        os.kill(pid, 9)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="makes cgroups and drops to another user: root")
def test_a_bounded_server_cannot_take_more_memory_or_processes_than_its_limits(tmp_path):
    """What a server the BoundedSpawner starts may use: its preexec puts the process in the
    server's cgroup and drops to the user, as the hub does (as nobody, the system's Python)."""
    import subprocess

    from autograder.classroom.spawner import BoundedSpawner
    from autograder.grader.sandbox import cgroups

    if isinstance(cgroups.find_parent(), str):
        pytest.skip(f"no cgroup here: {cgroups.find_parent()}")
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 that nobody may run")
    spawner = BoundedSpawner(mem_limit="200M", processes=24)
    spawner.user = SimpleNamespace(name="nobody")

    def run(what: str, amount: int) -> subprocess.CompletedProcess:
        spawner._group = spawner._limited()
        assert spawner._group is not None
        try:
            return subprocess.run(
                [python, "-c", _GREEDY, what, str(amount)],
                preexec_fn=spawner.make_preexec_fn("nobody"),
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        finally:
            folders = spawner._group.folders
            asyncio.run(spawner._remove_group())
            assert not any(os.path.exists(folder) for folder in folders)

    import asyncio

    assert run("memory", 50).stdout == "allocated\n"
    bomb = run("memory", 400)  # past the limit: this process is killed, not the machine's
    assert bomb.returncode == -signal.SIGKILL and "allocated" not in bomb.stdout, bomb
    assert run("processes", 5).stdout == "forked all\n"
    forks = run("processes", 100).stdout
    assert forks.startswith("refused BlockingIOError"), forks
    if cgroups.find_parent().cpu is None:
        pytest.skip("no cgroup cpu controller here: cpu_limit is not enforced")
    # Two processes busy for 2 s get 0.1 s of CPU together under a twentieth of a core;
    # without the quota they get 0.25 s or more even on a machine busy with 8 such.
    spawner.cpu_limit = 0.05
    used = float(run("cpu", 20).stdout)
    assert used < 0.2, used  # the quota's accounting periods end a little late


def test_a_cpu_quota_is_written_where_the_machine_has_the_controller(tmp_path):
    from autograder.grader.sandbox import cgroups

    for version in (1, 2):
        folders = [tmp_path / f"v{version}-{n}" for n in ("memory", "pids", "cpu")]
        for folder in folders:
            folder.mkdir()
        cpu = folders[2] if version == 1 else folders[0]
        parent = cgroups.CgroupParent(version, tuple(map(str, folders[: 3 - version])), str(cpu))
        group = parent.create(1024**3, 64, 1.5)
        quota = Path(group.folders[-1])
        if version == 1:
            assert quota.parent == cpu and len(group.folders) == 3
            assert (quota / "cpu.cfs_quota_us").read_text() == "150000"
        else:
            assert (quota / "cpu.max").read_text() == "150000 100000"
        uncapped = parent.create(1024**3, 64)  # no cpus: no quota, no cpu hierarchy joined
        assert len(uncapped.folders) == 3 - version
        assert not (Path(uncapped.folders[0]) / "cpu.max").exists()


def test_torch_compile_caches_stay_in_each_persons_home(tmp_path):
    import pwd

    config = _load(tmp_path)
    cache = config.Spawner.environment["TORCHINDUCTOR_CACHE_DIR"]
    assert cache(_spawner("root")) == pwd.getpwnam("root").pw_dir + "/.cache/torchinductor"
