"""A newcomer's first command: the Makefile finds a supported Python or says which ones it takes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
from conftest import REPO
from packaging.specifiers import SpecifierSet

sys.path.insert(0, str(REPO / "scripts"))
import uv_pip  # noqa: E402 - scripts/, beside the tests' own helpers

MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def _supported_in_makefile() -> list[str]:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    return re.search(r"^SUPPORTED_PYTHONS := (.+)$", makefile, re.M).group(1).split()


def _copy(tmp_path):
    """The Makefile and pyproject.toml alone in a folder, with a PATH folder of our choosing."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    return bin_dir


def _make(tmp_path, bin_dir, *args):
    return subprocess.run(
        [MAKE, *args],
        cwd=tmp_path,
        env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _fake_python(bin_dir, version):
    path = bin_dir / f"python{version}"
    path.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_make_names_the_python_versions_it_accepts_when_none_is_found(tmp_path):
    bin_dir = _copy(tmp_path)
    result = _make(tmp_path, bin_dir, "setup")
    assert result.returncode != 0
    assert "No supported Python found" in result.stdout
    assert "3.11, 3.12, 3.13 or 3.14" in result.stdout
    assert "make PYTHON=" in result.stdout
    assert not (tmp_path / ".venv").exists()


def test_make_picks_the_newest_supported_python(tmp_path):
    bin_dir = _copy(tmp_path)
    _fake_python(bin_dir, "3.12")
    newest = _fake_python(bin_dir, "3.13")
    _fake_python(bin_dir, "3.15")  # too new: PyTorch 2.14.1 has no wheels for it
    dry_run = _make(tmp_path, bin_dir, "-n", "setup").stdout
    assert f"{newest} -m venv .venv" in dry_run


def test_make_uses_the_python_it_is_given(tmp_path):
    bin_dir = _copy(tmp_path)
    _fake_python(bin_dir, "3.13")
    chosen = _fake_python(bin_dir, "3.11")
    dry_run = _make(tmp_path, bin_dir, "-n", "setup", f"PYTHON={chosen}").stdout
    assert f"{chosen} -m venv .venv" in dry_run


def test_the_makefile_accepts_exactly_the_versions_pyproject_allows():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    allowed = SpecifierSet(project["requires-python"])
    listed = _supported_in_makefile()
    candidates = [f"3.{minor}" for minor in range(8, 20)]
    assert sorted(listed, key=lambda v: int(v.split(".")[1])) == [
        v for v in candidates if f"{v}.0" in allowed
    ]
    assert listed == sorted(listed, key=lambda v: -int(v.split(".")[1])), "newest first"
    lowest = min(listed, key=lambda v: int(v.split(".")[1]))
    ruff = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    assert ruff["target-version"] == "py" + lowest.replace(".", "")


def test_the_readme_states_the_environment_size_and_the_cpu_only_build():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "download.pytorch.org/whl/cpu" in readme
    assert "6 GB" in readme and "--index-url" in readme


@pytest.mark.skipif(os.name != "posix", reason="shell scripts as fake interpreters")
def test_an_existing_venv_is_kept(tmp_path):
    bin_dir = _copy(tmp_path)
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (venv_bin / "python").chmod(0o755)
    dry_run = _make(tmp_path, bin_dir, "-n", "setup").stdout
    assert "-m pip install" in dry_run
    assert "No supported Python found" not in _make(tmp_path, bin_dir, "setup").stdout


def _make_test_pytest_options(workers: str) -> list[str]:
    """The options `make test` gives pytest, read from the Makefile's test recipe."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    line = re.search(r"^\t.*-m pytest (.+)$", makefile, re.M).group(1)
    return line.replace("$(PYTEST_WORKERS)", workers).replace("$(PYTEST_ARGS)", "").split()


def test_the_files_that_set_up_classrooms_run_as_one_unit():
    """They take turns on one lock; as one unit they take turns on one worker instead."""
    from conftest import scope

    files = ["tests/test_classroom.py", "tests/test_classroom_roster.py", "tests/test_grading.py"]
    units = [scope(f"{path}::test_x", path) for path in files]
    assert units[0] == units[1] != units[2] == "tests/test_grading.py"
    lesson = "tests/test_lesson_checks.py"
    assert scope(f"{lesson}::test_x[a]", lesson) == f"{lesson}::test_x[a]"


def test_make_test_keeps_each_file_on_one_worker(tmp_path):
    """A file's tests share its module fixture (a graded class, a server): split across
    workers, that fixture runs on each. This once broke without a failure (a pytest
    upgrade made pytest-xdist's grouping a no-op), so the suite checks it on itself."""
    files = ["tests/test_language.py", "tests/test_async_device.py"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", *_make_test_pytest_options("2"), "-v", *files]
        + ["-p", "no:cacheprovider", "--basetemp", str(tmp_path / "t")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    workers: dict[str, set[str]] = {}
    for worker, nodeid in re.findall(r"^\[(gw\d+)\] .*?(?:PASSED|SKIPPED) (\S+)", run.stdout, re.M):
        workers.setdefault(nodeid.split("::", 1)[0], set()).add(worker)
    assert set(workers) == set(files), run.stdout[-3000:]
    assert all(len(seen) == 1 for seen in workers.values()), workers


def test_uv_is_handed_the_sources_and_constraints_pip_was_given():
    """A mirror, a wheel folder or a constraints file that pip was given must reach uv too,
    or `make setup` would install other files than pip does (here: torch from local disk)."""
    listing = "\n".join(
        [
            ":env:.find-links='/opt/wheels'",
            ":env:.default-timeout='180'",
            "global.cert='/etc/ssl/certs/ca-certificates.crt'",
            "global.constraint='/etc/pip/caps.txt'",
            "global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'",
            "global.find-links='/srv/ignored'",
            "global.index-url='https://mirror.example/simple'",
            "install.index-url='https://nearer.example/simple'",
            "install.no-index='false'",
            "freeze.find-links='/not/for/install'",
        ]
    )
    options = uv_pip.uv_options(uv_pip.pip_settings(listing))
    pairs = list(zip(options[::2], options[1::2], strict=False))
    assert options[:2] == ["--index-strategy", "unsafe-best-match"]  # every index, as pip
    assert ("--index-url", "https://nearer.example/simple") in pairs  # [install] over [global]
    assert ("--find-links", "/opt/wheels") in pairs  # PIP_FIND_LINKS over the files
    assert "/srv/ignored" not in options and "/not/for/install" not in options
    assert ("--extra-index-url", "file:///opt/a/simple") in pairs
    assert ("--extra-index-url", "file:///opt/b/simple") in pairs
    assert ("--constraint", "/etc/pip/caps.txt") in pairs
    assert "--no-index" not in options
    assert uv_pip.uv_options(uv_pip.pip_settings("global.no-index='yes'"))[-1] == "--no-index"


def test_uv_reaches_the_index_as_pip_was_told_to():
    """A certificate bundle, a proxy and a timeout given to pip reach uv through the
    variables it reads; one the caller set already wins, as it does for pip's own."""
    settings = uv_pip.pip_settings(
        "global.cert='/etc/corp-ca.pem'\nglobal.proxy='http://proxy:3128'\n"
        ":env:.default-timeout='180'"
    )
    environ = uv_pip.uv_environment(settings, {"HTTP_PROXY": "http://mine:8080", "HOME": "/h"})
    assert environ["SSL_CERT_FILE"] == "/etc/corp-ca.pem"
    assert environ["HTTPS_PROXY"] == "http://proxy:3128"
    assert environ["HTTP_PROXY"] == "http://mine:8080"
    assert environ["UV_HTTP_TIMEOUT"] == "180" and environ["HOME"] == "/h"


def test_make_setup_installs_with_uv_and_pips_configuration(tmp_path):
    bin_dir = _copy(tmp_path)
    _fake_python(bin_dir, "3.12")
    dry_run = _make(tmp_path, bin_dir, "-n", "setup").stdout
    assert '-m pip install --quiet "uv==' in dry_run
    assert "scripts/uv_pip.py install --compile-bytecode -e" in dry_run
