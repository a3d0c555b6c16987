#!/usr/bin/env bash
# The GPU side of the course, for a machine with a CUDA GPU: run `make gpu-check`.
# It executes every solution notebook (both languages) on CUDA and runs the CUDA test cases.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$PWD/.venv/bin"
export PATH="$BIN:$PATH"

if ! "$BIN/python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "gpu-check: torch sees no CUDA GPU on this machine; nothing to check." >&2
    exit 1
fi
"$BIN/python" -c "import torch; print('GPU:', torch.cuda.get_device_name(0), '| torch', torch.__version__)"

export COURSE_DEVICE=cuda
"$BIN/python" scripts/run_solutions.py
"$BIN/python" -m pytest -m cuda -q -ra

# Lesson 09's GPU-only cells (save_on_cpu's GPU memory, float16 autocast with a GradScaler) start
# with `if DEVICE.type == "cuda":`; on CUDA each must measure ("measured on …"), not skip.
"$BIN/python" - <<'PY'
import sys

from nbclient import NotebookClient

from autograder import bilingual

nb = bilingual.split(bilingual.read("solutions/09_scale/09_scale.ipynb"), "en")
NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True).execute()
gpu_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith('if DEVICE.type == "cuda":')]
printed = {c.id: "".join(o.get("text", "") for o in c.outputs) for c in gpu_cells}
skipped = [cid for cid, text in printed.items() if "measured on" not in text]
print(f"lesson 09: {len(gpu_cells)} GPU-only cells, skipped or failed: {skipped or 'none'}")
sys.exit(1 if skipped or len(gpu_cells) < 2 else 0)
PY
