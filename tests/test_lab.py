"""`make lab` starts a JupyterLab that serves the course: loopback, token, nbgrader, Chinese."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from conftest import REPO
from processes import free_port, stop_group

pytestmark = pytest.mark.notebooks
TOKEN = "course-test-token"


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, ""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    port = free_port()
    home = tmp_path_factory.mktemp("home")
    args = f"--no-browser --port={port} --IdentityProvider.token={TOKEN}"
    process = subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"],
        cwd=REPO,
        env=dict(os.environ, HOME=str(home), JUPYTER_RUNTIME_DIR=str(home / "runtime")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"`make lab` exited early with code {process.returncode}")
            try:
                if _get(f"{base}/api/status?token={TOKEN}")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 90 s")
        yield base
    finally:
        stop_group(process)


def test_api_requires_the_token(lab):
    assert _get(f"{lab}/api/status")[0] == 403
    assert _get(f"{lab}/api/status?token={TOKEN}")[0] == 200


def test_serves_the_learner_notebooks_in_both_languages(lab):
    for lang in ("en", "zh"):
        status, body = _get(f"{lab}/api/contents/{lang}?token={TOKEN}")
        assert status == 200
        names = {item["name"] for item in json.loads(body)["content"]}
        assert "01_requires_grad.ipynb" in names


def test_chinese_language_pack_is_available(lab):
    status, body = _get(f"{lab}/lab/api/translations/?token={TOKEN}")
    assert status == 200
    assert "zh_CN" in json.loads(body)["data"]
    status, body = _get(f"{lab}/lab/api/translations/zh_CN?token={TOKEN}")
    assert status == 200 and json.loads(body)["data"]


def test_nbgrader_extensions_are_enabled(lab):
    status, page = _get(f"{lab}/lab?token={TOKEN}")
    assert status == 200 and "@jupyter/nbgrader" in page
    assert _get(f"{lab}/formgrader?token={TOKEN}")[0] in (200, 302)
