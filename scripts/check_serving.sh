#!/usr/bin/env bash
# Serving (issue 31; docs/serving.md): serving/tests with pytest (the greedy
# scheduler against Algorithm 1, the PPO router, the simulator, threaded nodes
# on braid, an end-to-end run on a local Ray cluster with a replica killed) and
# `bench/slim_serving.py --quick`, in a venv under build-serving/ with numpy,
# pytest and ray[serve] from PyPI.
#
#   scripts/check_serving.sh
#
# braid comes from, in order: BRAID_WHEEL (a wheel, e.g. check_python.sh's
# build-python/dist/braid-*.whl), BRAID_PYTHONPATH (a folder holding the braid
# package, e.g. build/python of a -DBRAID_PYTHON=ON build), build/python when it
# has the extension, else a wheel built here like check_python.sh does.
# BRAID_SERVING_FRESH=1 recreates the venv (by default it is reused once complete).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="$ROOT/build-serving"
VENV="$OUT/venv"
start=$(date +%s)

if [[ "${BRAID_SERVING_FRESH:-0}" == 1 || ! -f "$VENV/.complete" ]]; then
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check numpy pytest "ray[serve]"
  touch "$VENV/.complete"
fi
echo "check_serving: venv ready in $(( $(date +%s) - start )) s"

export PYTHONPATH="$ROOT/serving"
if [[ -n "${BRAID_WHEEL:-}" ]]; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$BRAID_WHEEL"
elif [[ -n "${BRAID_PYTHONPATH:-}" ]]; then
  PYTHONPATH="$BRAID_PYTHONPATH:$PYTHONPATH"
elif compgen -G "$ROOT/build/python/braid/_braid*.so" > /dev/null; then
  PYTHONPATH="$ROOT/build/python:$PYTHONPATH"
else
  "$VENV/bin/pip" install --quiet --disable-pip-version-check scikit-build-core pybind11
  "$VENV/bin/pip" wheel --quiet --disable-pip-version-check --no-deps -w "$OUT/dist" \
    --config-settings=build-dir="$OUT/build-{wheel_tag}" --config-settings=cmake.define.BRAID_CUDA=OFF "$ROOT"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$OUT"/dist/braid-*.whl
fi
export PYTHONPATH
cd "$OUT"  # outside the source tree: `import braid` is the installed package or PYTHONPATH's
"$VENV/bin/python" -c "import braid; print('check_serving: braid from', braid.__file__)"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -rs "$ROOT/serving/tests"
"$VENV/bin/python" "$ROOT/bench/slim_serving.py" --quick | tee "$OUT/slim_serving_quick.log"
grep -q "slim_serving: done" "$OUT/slim_serving_quick.log"
echo "check_serving: ok in $(( $(date +%s) - start )) s"
