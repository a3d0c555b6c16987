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
