"""`make lab` serves self-study: loopback, token, Chinese, Validate, no course panels."""

from __future__ import annotations

import json
import re
import urllib.parse

import nbgrader
import pytest
from conftest import REPO
from lab_server import get, running_lab

pytestmark = pytest.mark.notebooks

# nbgrader's JupyterLab plugins that need a course or an exchange (or are the instructor's).
NEEDS_A_COURSE = [
    "@jupyter/nbgrader:assignment-list",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:menu",
]
VALIDATE = "@jupyter/nbgrader:validate-assignment"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(tmp_path_factory.mktemp("lab")) as server:
        yield server


def _page_config(lab) -> dict:
    status, page = get(lab.url("/lab"))
    assert status == 200
    found = re.search(
        r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S
    )
    assert found, "the /lab page carries no page config"
    return json.loads(found.group(1))


def test_api_requires_the_token(lab):
    assert get(f"{lab.base}/api/status")[0] == 403
    assert get(lab.url("/api/status"))[0] == 200


def test_serves_the_learner_notebooks_in_both_languages(lab):
    for lang in ("en", "zh"):
        status, body = get(lab.url(f"/api/contents/{lang}"))
        assert status == 200
        names = {item["name"] for item in json.loads(body)["content"]}
        assert "01_requires_grad.ipynb" in names


def test_chinese_language_pack_is_available(lab):
    status, body = get(lab.url("/lab/api/translations/"))
    assert status == 200
    assert "zh_CN" in json.loads(body)["data"]
    status, body = get(lab.url("/lab/api/translations/zh_CN"))
    assert status == 200 and json.loads(body)["data"]


def test_only_validate_of_nbgrader_is_enabled_for_self_study(lab):
    config = _page_config(lab)
    assert "@jupyter/nbgrader" in {ext["name"] for ext in config["federated_extensions"]}
    disabled = set(config["disabledExtensions"])
    assert set(NEEDS_A_COURSE) <= disabled
    assert VALIDATE not in disabled and "@jupyter/nbgrader" not in disabled
    for path in ("/formgrader", "/courses", "/assignments"):
        assert get(lab.url(path))[0] == 404, path


def test_validate_runs_a_learner_notebook_and_the_terminal_stays_quiet(lab):
    status, body = get(lab.url(f"/nbgrader_version?version={nbgrader.__version__}"))
    assert status == 200 and json.loads(body)["success"]
    form = urllib.parse.urlencode({"path": "en/01_requires_grad.ipynb"}).encode()
    status, body = get(lab.url("/assignments/validate"), data=form, timeout=300)
    assert status == 200
    result = json.loads(body)
    assert result["success"], result["value"]
    # Unanswered exercises fail validation: the learner is told, nothing crashed.
    assert result["value"]["failed"], result["value"]
    terminal = lab.terminal()
    assert "Validating" in terminal
    for noise in ("No nbgrader_config.py", "Traceback", "without encryption", "[E "):
        assert noise not in terminal, noise


@pytest.mark.parametrize("setup", ["self-study", "classroom-learner", "classroom-instructor"])
def test_validate_ends_its_kernel_at_once(setup):
    """Validate's kernel is thrown away after the run: ending it at once saves the learner
    the second a kernel that imported torch takes to tear itself down."""
    from nbgrader.preprocessors import Execute
    from traitlets.config.loader import PyFileConfigLoader

    folder = REPO / "jupyter-config" / setup
    config = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    assert Execute(config=config).shutdown_kernel == "immediate"
