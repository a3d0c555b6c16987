# The course's commands. Each target prepares .venv first, so a fresh clone needs nothing else.
#   make lab    - start JupyterLab on the learner notebooks (127.0.0.1, with a token)
#   make test   - lint and run every test
#   make build  - regenerate notebooks/ from solutions/ with nbgrader
#   make gpu-check - run the solution notebooks and the CUDA tests on a machine with a GPU

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)

.PHONY: setup lab test build gpu-check benchmark

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

# Jupyter refuses to run as root unless told; containers and CI often are root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# The Jupyter set-up `make lab` serves, a folder of jupyter-config/ put first on Jupyter's
# config path: self-study (default) shows only what works without a course (Validate, not
# nbgrader's Assignments, Courses or Formgrader). A classroom set-up would be a sibling folder
# enabling those, chosen with `make lab LAB_SETUP=classroom`.
LAB_SETUP ?= self-study
LAB_CONFIG := $(CURDIR)/jupyter-config/$(LAB_SETUP)
# The folder it serves; tests serve a copy so that autosave never touches notebooks/.
LAB_ROOT ?= notebooks

lab: setup
	@test -d "$(LAB_CONFIG)" || { echo "No Jupyter set-up $(LAB_CONFIG)"; exit 2; }
	JUPYTER_CONFIG_PATH="$(LAB_CONFIG)$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH))" \
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir="$(LAB_ROOT)" $(ALLOW_ROOT) $(LAB_ARGS)

test: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

build: setup
	$(BIN)/python -m autograder.build

gpu-check: setup
	bash scripts/gpu_check.sh
