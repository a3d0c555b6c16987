"""One environment, described consistently per tool; the README shows the real commands."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import yaml
from conftest import REPO


def _normalise(requirement: str) -> str:
    return re.sub(r"\s+", "", requirement).lower().replace("_", "-")


def test_environment_yml_and_pyproject_agree():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_normalise(r) for r in project["dependencies"]}
    declared |= {_normalise(r) for r in project["optional-dependencies"]["dev"]}
    env = yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    conda_python = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python")]
    listed = {_normalise(r) for r in pip_section if not r.startswith("-e")}
    assert listed == declared
    assert "-e ." in pip_section
    assert conda_python == ["python" + project["requires-python"]]


def test_readme_shows_the_commands_and_ci_runs_its_set_up_and_test_ones():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", readme, re.S)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    commands = [c for c in commands if c]
    assert commands[:3] == ["make lab", "make system-packages", "make test"]
    assert set(commands) == {"make lab", "make system-packages", "make test"}
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert ci[-2:] == ["make system-packages", "make test"]


def test_lab_listens_on_loopback_only():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "--ServerApp.ip=127.0.0.1" in makefile


# What the course's commands and nbgrader's course configuration import to start.
LIGHT_STARTS = [
    "autograder",
    "autograder.course",
    "autograder.starter",
    "autograder.build",
    "autograder.grader.cli",
    "autograder.classroom.cli",
    "nbformat",
    "jupyter_events",
]


def test_the_commands_and_the_course_config_start_without_slow_imports():
    """torch is imported only where checks or grading run, and jsonschema never loads
    rfc3987-syntax (seconds per process, in every nbgrader and Jupyter command)."""
    code = "; ".join(f"import {name}" for name in LIGHT_STARTS)
    code += "; import sys; print(sorted({'torch', 'rfc3987_syntax'} & set(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout
