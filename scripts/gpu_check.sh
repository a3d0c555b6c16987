#!/usr/bin/env bash
# The GPU side of the course, for a machine with a CUDA GPU: run `make gpu-check`.
# It executes every solution notebook (both languages) on CUDA and runs the CUDA test cases,
# side by side (a GPU machine has cores to spare), and prints a summary of each.
# PYTHON names another interpreter than the course's .venv (scripts/gpu_bundle.sh says when);
# GPU_CHECK_LOGS, the folder that keeps the full logs (default: test-artifacts/gpu-check).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-$PWD/.venv/bin/python}"
LOGS="${GPU_CHECK_LOGS:-test-artifacts/gpu-check}"
mkdir -p "$LOGS"

if ! "$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "gpu-check: torch sees no CUDA GPU on this machine; nothing to check." >&2
    exit 1
fi
"$PYTHON" -c "import torch; print('GPU:', torch.cuda.get_device_name(0), '| torch', torch.__version__)"
export COURSE_DEVICE=cuda
workers=$("$PYTHON" -c "import os; print(max(1, min(8, len(os.sched_getaffinity(0)) // 2)))")

# The states the learner's checks compare with were computed with the course's torch; under
# another version (a GPU image's own) inputs drawn in bfloat16 can differ, which is no CUDA
# finding: the states are computed again here first, with this torch, and that is said.
# The shipped files are put back when the check ends, whatever way it ends.
if ! "$PYTHON" -c "import sys; from autograder.common import expectations as e; sys.exit(not e.current())"; then
    echo "gpu-check: the shipped expected states were made with other code or another torch;"
    echo "  computing them again with this one for the check (python -m autograder.references.expected)"
    shipped=$(mktemp -d)
    cp -a autograder/lessons/expected/. "$shipped/"
    trap 'cp -a "$shipped/." autograder/lessons/expected/ && rm -rf "$shipped"' EXIT
    "$PYTHON" -m autograder.references.expected >"$LOGS/expected.log" 2>&1
fi

"$PYTHON" scripts/run_solutions.py --jobs "$workers" >"$LOGS/notebooks.log" 2>&1 &
notebooks=$!
# Only the plugins the course uses: a GPU image may carry others built for another pytest.
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
pytest=("$PYTHON" -m pytest -p xdist.plugin -p no:cacheprovider -m cuda)
# With the bundle of scripts/gpu_bundle.sh the grading packages (nbgrader, JupyterHub) are not
# there: the test files that import them hold no CUDA case and are left out, by name.
"${pytest[@]}" --collect-only -q >"$LOGS/collect.log" 2>&1 || true
mapfile -t files < <(sed -n 's/::.*//p' "$LOGS/collect.log" | sort -u)
if [ "${#files[@]}" -eq 0 ]; then
    echo "gpu-check: no CUDA test was collected:" >&2
    tail -20 "$LOGS/collect.log" >&2
    exit 1
fi
"${pytest[@]}" -q -ra -n "$workers" "${files[@]}" >"$LOGS/pytest.log" 2>&1 &
tests=$!

# Lesson 09's GPU-only cells (save_on_cpu's GPU memory, float16 autocast with a GradScaler) start
# with `if DEVICE.type == "cuda":`; on CUDA each must measure ("measured on …"), not skip.
lesson09=0
"$PYTHON" - <<'PY' >"$LOGS/lesson09.log" 2>&1 || lesson09=$?
import sys

from nbclient import NotebookClient

from autograder import bilingual

nb = bilingual.split(bilingual.read("solutions/09_scale/09_scale.ipynb"), "en")
NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True).execute()
gpu_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith('if DEVICE.type == "cuda":')]
printed = {c.id: "".join(o.get("text", "") for o in c.outputs) for c in gpu_cells}
for cid, text in printed.items():
    print(f"cell {cid}: {text.strip()}")
skipped = [cid for cid, text in printed.items() if "measured on" not in text]
print(f"lesson 09: {len(gpu_cells)} GPU-only cells, skipped or failed: {skipped or 'none'}")
sys.exit(1 if skipped or len(gpu_cells) < 2 else 0)
PY
status=0
wait "$notebooks" || status=1
wait "$tests" || status=1
[ "$lesson09" -eq 0 ] || status=1

quiet() { grep -v "Kernel is running over TCP without encryption" "$1" || true; }
echo "== solution notebooks on CUDA"
quiet "$LOGS/notebooks.log"
echo "== lesson 09's GPU-only cells"
quiet "$LOGS/lesson09.log"
echo "== pytest -m cuda over ${#files[@]} files (the whole log is $LOGS/pytest.log)"
{ grep -E "^(FAILED|ERROR|XPASS)" "$LOGS/pytest.log" | head -40; tail -1 "$LOGS/pytest.log"; } || true
# A file left out for a missing module is named; any other collection error fails the check.
awk '/^_+ ERROR collecting/ {file=$4} /^E +/ && file {print "left out: " file ": " substr($0, 5); file=""}' \
    "$LOGS/collect.log"
if grep -A1 -E "^_+ ERROR collecting" "$LOGS/collect.log" | grep -E "^E " | grep -qv ModuleNotFoundError; then
    status=1
fi
exit "$status"
