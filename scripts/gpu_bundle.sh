#!/usr/bin/env bash
# For a GPU machine that has Python and PyTorch but cannot reach a package index: gathers here,
# into .gpu/ (git-ignored), what `make gpu-check` needs there besides torch, numpy, matplotlib
# and pytest, small enough to copy over with the repository (about 30 MB).
#
#   scripts/gpu_bundle.sh [PYTHON_VERSION]        # that machine's Python, default 3.12
#
# There, with the repository (and .gpu/) copied over:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu/wheels/*.whl
#   PYTHONPATH=/tmp/site:$PWD/.gpu/site:$PWD PYTHON=python3 bash scripts/gpu_check.sh
#
# Grading itself (nbgrader, the sandbox) is not part of the GPU check: its kernels see no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON_VERSION="${1:-3.12}"
BUNDLE=.gpu
rm -rf "$BUNDLE" && mkdir -p "$BUNDLE/wheels" "$BUNDLE/site"

platforms=()
for tag in manylinux1 manylinux2014 manylinux_2_5 manylinux_2_17 manylinux_2_24 manylinux_2_26 \
    manylinux_2_27 manylinux_2_28 manylinux_2_31 manylinux_2_34 manylinux_2_35; do
    platforms+=(--platform "${tag}_x86_64")
done
# What the solution notebooks' kernels and the CUDA tests import, with everything it needs.
python3 -m pip download -q --only-binary=:all: --python-version "$PYTHON_VERSION" \
    --implementation cp "${platforms[@]}" -d "$BUNDLE/wheels" \
    nbclient "nbformat>=5.9" ipykernel "jsonschema>=4.18,<4.25" "nh3>=0.2.17" \
    "filelock>=3.12" "pytest>=8" "pytest-xdist>=3.6"
# The course finds its Chinese font inside mplfonts (autograder/kernel/fonts.py) without
# importing it: that one font file travels, not the package's other 70 MB of fonts.
python3 -m pip download -q --no-deps -d "$BUNDLE/sdist" "mplfonts==0.0.11"
font=$(python3 -c "import autograder.kernel.fonts as f; print(f._FONT_FILE)" 2>/dev/null ||
    echo NotoSansCJKsc-Regular.otf)
archive=$(ls "$BUNDLE"/sdist/mplfonts-*)
mkdir -p "$BUNDLE/site/mplfonts/fonts"
case "$archive" in
*.whl) unzip -q -j "$archive" "mplfonts/__init__.py" -d "$BUNDLE/site/mplfonts" &&
    unzip -q -j "$archive" "mplfonts/fonts/$font" -d "$BUNDLE/site/mplfonts/fonts" ;;
*) tar -xzf "$archive" -C "$BUNDLE/sdist" &&
    cp "$BUNDLE"/sdist/mplfonts-*/mplfonts/__init__.py "$BUNDLE/site/mplfonts/" &&
    cp "$BUNDLE"/sdist/mplfonts-*/mplfonts/fonts/"$font" "$BUNDLE/site/mplfonts/fonts/" ;;
esac
rm -rf "$BUNDLE/sdist"
du -sh "$BUNDLE"
