#!/usr/bin/env bash
# Creates (or reuses) the Python environment the benchmark/reference scripts
# run in: a venv under the build folder with onnxruntime, onnx and numpy from
# PyPI. --system-site-packages keeps Debian's torch/torchvision importable
# (scripts/export_torchvision.py). Nothing here is a dependency of the library.
#
#   PY=$(bench/python_env.sh [BUILD_DIR])   # prints the venv's python
#
# The bench scripts call this themselves (bench/bench_common.py) and re-run
# under the venv, so running them with /usr/bin/python3 is enough.
set -euo pipefail

build_dir="${1:-${BRAID_BUILD_DIR:-build}}"
venv="${build_dir}/bench-venv"
python="${venv}/bin/python"

if [ ! -x "${python}" ] || ! "${python}" -c "import onnxruntime, onnx, numpy" >/dev/null 2>&1; then
  echo "python_env: creating ${venv} (onnxruntime, onnx, numpy from PyPI)" >&2
  mkdir -p "${build_dir}"
  /usr/bin/python3 -m venv --system-site-packages "${venv}" >&2 \
    || { echo "python_env: /usr/bin/python3 -m venv failed (install python3-venv: scripts/setup.sh)" >&2; exit 1; }
  "${python}" -m pip install --quiet --disable-pip-version-check onnxruntime onnx numpy >&2
fi
echo "$(cd "$(dirname "${python}")" && pwd)/$(basename "${python}")"
