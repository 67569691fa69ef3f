#!/usr/bin/env bash
# Installs every Debian package braid's build, tests and benchmarks need.
# Idempotent: installs only what is missing. Needs root (or sudo).
#
#   scripts/setup.sh
#
# The CUDA toolkit (nvcc, cuDNN 9, cuBLAS) is not a Debian package here: when
# /usr/local/cuda has it, the build turns the CUDA backend on (BRAID_CUDA=AUTO).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libdnnl-dev                              # oneDNN 2.6: CPU kernels
  ocl-icd-opencl-dev                       # oneDNN's CMake config finds OpenCL (only Recommended)
  libflatbuffers-dev flatbuffers-compiler  # the .braid format
  libonnx-dev libprotobuf-dev protobuf-compiler  # ONNX import
  libonnx-testdata                         # ONNX backend conformance cases
  libeigen3-dev                            # RL policies (small MLPs)
  googletest libgtest-dev libbenchmark-dev
  python3 python3-numpy python3-torchvision  # exporting reference models (tests, benches only)
  python3-venv                             # bench/python_env.sh (ORT reference venv), scripts/check_python.sh
  python3-dev                              # the Python package (pip install .: Python.h)
  patchelf                                 # scripts/bundle.sh (RUNPATH of the bundled programs)
  clang libclang-rt-14-dev                 # scripts/fuzz.sh (libFuzzer targets, tests/fuzz)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
