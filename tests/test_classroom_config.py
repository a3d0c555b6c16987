"""The classroom's JupyterHub configuration, read as JupyterHub reads it (fast, no hub started)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

from conftest import REPO
from traitlets.config.loader import PyFileConfigLoader

from autograder.classroom import accounts, hub_config, setup

DEFAULTS = hub_config.Listen()


def _load(tmp_path: Path, listen=DEFAULTS, password: str | None = "pw"):
    text = hub_config.render(
        tmp_path,
        listen,
        Path(sys.executable).parent,
        Path(sys.executable),
        setup.CONFIG_ROOT,
        "teacher",
        ["alice", "chen"],
        password,
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


def test_demo_and_real_log_in(tmp_path):
    demo = _load(tmp_path)
    assert demo.JupyterHub.authenticator_class == "dummy"
    assert demo.DummyAuthenticator.password == "pw"
    assert demo.Authenticator.allowed_users == {"teacher", "alice", "chen"}
    assert demo.Authenticator.admin_users == {"teacher"}
    real = _load(tmp_path, password=None)
    assert real.JupyterHub.authenticator_class == "pam"
    assert "DummyAuthenticator" not in real


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
    from autograder.grader import feedback

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


def test_setup_run_again_keeps_the_shared_password(tmp_path):
    _load(tmp_path, password="Ab3-_x")
    assert setup._password_in(tmp_path / "jupyterhub_config.py") == "Ab3-_x"
    _load(tmp_path, password=None)
    assert setup._password_in(tmp_path / "jupyterhub_config.py") is None
