# The course's commands. Each target prepares .venv first, so a fresh clone needs nothing else.
#   make lab    - start JupyterLab on the learner notebooks (127.0.0.1, with a token)
#   make test   - lint and run every test (what CI runs)
#   make test-quick - lint and the fast tests, for the edit-run loop: no notebook execution,
#                 no nbgrader or course-grade runs, no sweep over every catalogued answer
#                 (markers notebooks and slow, tests/conftest.py)
#   make build  - regenerate notebooks/ from solutions/ with nbgrader, and the references'
#                 states the learner's side compares with (autograder/lessons/expected/)
#   make gpu-check - run the solution notebooks and the CUDA tests on a machine with a GPU
#   make system-packages - once, on Debian/Ubuntu: bubblewrap (grading sandbox), Chromium and a
#                          Chinese font for it (browser tests; their screenshots show zh text)

# CPython versions for which every pinned dependency ships wheels (requires-python in
# pyproject.toml says the same). The newest one on PATH is used; `make PYTHON=/path/to/python`
# picks another. Chosen before PATH gains .venv/bin, so the venv never rebuilds itself.
SUPPORTED_PYTHONS := 3.14 3.13 3.12 3.11
ifeq ($(origin PYTHON),undefined)
# A name on PATH must also run: version managers (pyenv) install shims that exist but fail.
PYTHON := $(shell for v in $(SUPPORTED_PYTHONS); do \
	p=$$(command -v python$$v) && $$p -c '' 2>/dev/null && echo $$p && exit; done; \
	python3 -c 'import sys; sys.exit(not (3, 11) <= sys.version_info < (3, 15))' 2>/dev/null \
	&& command -v python3)
endif
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
UV_VERSION := 0.13.9
export PATH := $(BIN):$(PATH)

.PHONY: setup bytecode lab test test-quick build gpu-check benchmark system-packages

# An existing .venv is kept (e.g. one where PyTorch's CPU-only build was installed first:
# uv keeps any installed version the pins allow). pip installs the pinned uv, which installs
# the rest with pip's configuration (scripts/uv_pip.py): it unpacks the wheels and
# byte-compiles their 12,000 modules on every core, where pip unpacks one wheel after another
# (2 cores: 26 to 48 s against 87 s for pip and compileall, 2026-12-05).
$(STAMP): pyproject.toml
	@python=$(BIN)/python; test -x $$python || python="$(PYTHON)"; \
	if [ -z "$$python" ]; then \
		echo "No supported Python found: the course needs CPython 3.11, 3.12, 3.13 or 3.14"; \
		echo "(nbgrader 0.9.6 needs 3.11 or newer; PyTorch 2.14.1 has wheels up to 3.14)."; \
		echo "Install one of them, or name it: make PYTHON=/path/to/python3.12 $(MAKECMDGOALS)"; \
		exit 1; fi; \
	$$python -c 'import sys; ok = (3, 11) <= sys.version_info < (3, 15); \
		ok or print(f"{sys.executable} is Python {sys.version.split()[0]};", \
		"the course needs CPython 3.11, 3.12, 3.13 or 3.14."); sys.exit(not ok)'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "uv==$(UV_VERSION)"
	$(BIN)/python scripts/uv_pip.py install --compile-bytecode -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

# Jupyter refuses to run as root unless told; containers and CI often are root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# The Jupyter set-up `make lab` serves, a folder of jupyter-config/ put first on Jupyter's
# config path: self-study (default) shows only what works without a course (Validate, not
# nbgrader's Assignments, Courses or Formgrader). The classroom's set-ups, classroom-learner
# and classroom-instructor, enable those; JupyterHub chooses them (`course-classroom`).
LAB_SETUP ?= self-study
LAB_CONFIG := $(CURDIR)/jupyter-config/$(LAB_SETUP)
# The folder it serves; tests serve a copy so that autosave never touches notebooks/.
LAB_ROOT ?= notebooks

lab: setup bytecode
	@test -d "$(LAB_CONFIG)" || { echo "No Jupyter set-up $(LAB_CONFIG)"; exit 2; }
	JUPYTER_CONFIG_PATH="$(LAB_CONFIG)$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH))" \
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir="$(LAB_ROOT)" $(ALLOW_ROOT) $(LAB_ARGS)

# Test files run in parallel (pytest-xdist), each file on one worker, so that a file's module
# fixture (a graded class, a server) runs once, except the many short tests of the answer
# catalogue and the held-back answers, which fill whichever worker is free (the scheduler in tests/conftest.py); in the
# order conftest gives (the longest first), not xdist's (most tests first). One worker more
# than the cores: some files wait (a server starting, a browser, a time limit running out)
# and the extra worker keeps the cores busy meanwhile; on the 2-core machine three workers
# took 6 % less wall time than two for 2-3 % more CPU (2026-12-05, the same clone: pytest
# 10 min 25 s against 11 min 6 s). PYTEST_WORKERS=0 runs them one after another.
PYTEST_WORKERS ?= $(shell expr $$(nproc 2>/dev/null || echo 1) + 1)

# Python reads a module's compiled form from __pycache__ and otherwise compiles its source
# at every import; where PYTHONDONTWRITEBYTECODE is set (as in many containers and CI
# machines) it never keeps what it compiled, so each of the suite's some 400 Python
# processes (pytest's workers, course-grade's, kernels, servers) compiled the course's
# modules anew: 0.55 busy core-s of a one-submission `course-grade grade` run, 2026-12-05.
# Compiled here once (a moment when nothing changed); pytest still rewrites test files.
BYTECODE := autograder scripts tests

bytecode: setup
	$(BIN)/python -m compileall -q -j 0 $(BYTECODE)

test: setup bytecode
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

# The edit-run loop: the same lint and scheduling, the tests marked neither notebooks nor slow.
QUICK_TESTS := not notebooks and not slow

test-quick: setup bytecode
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder \
		-m "$(QUICK_TESTS)" $(PYTEST_ARGS)

build: setup
	$(BIN)/python -m autograder.build
	$(BIN)/python -m autograder.references.expected

gpu-check: setup
	bash scripts/gpu_check.sh

# Not Python packages: the grading sandbox needs bubblewrap and libseccomp, the browser test
# Debian's Chromium.
SYSTEM_PACKAGES := bubblewrap libseccomp2 chromium fonts-wqy-microhei
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

system-packages:
	$(SUDO) apt-get update -q
	$(SUDO) apt-get install -y -q --no-install-recommends $(SYSTEM_PACKAGES)
