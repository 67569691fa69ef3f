#!/usr/bin/env bash
# Builds the Python package's wheel (`pip wheel .`: scikit-build-core + CMake),
# installs it into a fresh venv and runs tests/python with pytest there: the
# outputs against the C++ API (the `braid` CLI) and ONNX Runtime, bad input.
#
#   scripts/check_python.sh [BRAID_CLI]   # CLI default: build/tools/braid
#
# Environment: BRAID_ZOO_DIR (exported torchvision models; without it the ONNX
# Runtime comparison is skipped and says so), BRAID_PYTHON_CUDA (ON/OFF/AUTO,
# default OFF, as pyproject.toml: docs/python.md says why),
# BRAID_PYTHON_BUILD_DIR (default build-python), BRAID_PYTHON_CMAKE_BUILD_DIR
# (the CMake build tree; default a per-wheel-tag folder in it: scripts/test.sh
# passes scripts/check_install.sh's, whose library objects then need no
# rebuild). The build and test
# dependencies (scikit-build-core, pybind11, pytest, onnxruntime, onnx, numpy) come
# from PyPI into the venv / pip's isolated build environment.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CLI=${1:-$ROOT/build/tools/braid}
OUT=${BRAID_PYTHON_BUILD_DIR:-$ROOT/build-python}
CUDA=${BRAID_PYTHON_CUDA:-OFF}
VENV="$OUT/venv"
default_build="$OUT/build-{wheel_tag}"  # scikit-build-core fills in the tag
CMAKE_BUILD=${BRAID_PYTHON_CMAKE_BUILD_DIR:-$default_build}

start=$(date +%s)
rm -rf "$VENV" "$OUT/dist"
/usr/bin/python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check pytest numpy onnxruntime onnx
"$VENV/bin/pip" wheel --quiet --disable-pip-version-check --no-deps -w "$OUT/dist" \
  --config-settings=build-dir="$CMAKE_BUILD" \
  --config-settings=cmake.define.BRAID_CUDA="$CUDA" "$ROOT"
wheel=$(ls "$OUT"/dist/braid-*.whl)
echo "check_python: built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB) in $(( $(date +%s) - start )) s"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "$wheel"

# From outside the source tree, so `import braid` is the installed package.
cd "$OUT"
"$VENV/bin/python" -c "import braid, sys; print('check_python: import braid from', braid.__file__)"
"$VENV/bin/python" "$ROOT/examples/run_model.py" builtin:tiny_cnn --frames 3 | tee example.log
grep -q "output output \[1, 1000\] float32" example.log
BRAID_CLI="$CLI" "$VENV/bin/python" -m pytest -q -p no:cacheprovider -rs "$ROOT/tests/python"
echo "check_python: ok in $(( $(date +%s) - start )) s"
