#!/usr/bin/env bash
# The first run on a machine with an NVIDIA GPU checks everything at once:
#   1. builds braid with CUDA (Release + debug info) for this GPU's arch,
#   2. `braid devices --ops` (the GPU must be listed, not "unavailable"),
#   3. the CUDA op cases on the GPU (braid_cuda_tests: every case with a CUDA
#      kernel against kernels/reference) under compute-sanitizer memcheck,
#      racecheck (shared-memory reductions), initcheck and synccheck,
#   4. the zoo / built-in models through the runtime under compute-sanitizer
#      memcheck (braid_onnx_tests ZooTest, braid_runtime_tests),
#   5. the op benchmarks (braid_kernels_bench) - real GPU figures.
#
#   tests/cuda/run_gpu_checks.sh [BUILD_DIR]      # default build-gpu/
#   CUDA_ARCH=87 tests/cuda/run_gpu_checks.sh     # override the detected arch
#
# Exits non-zero on the first failure; no test may be SKIPPED for "no CUDA
# device" here (that would mean the GPU was not found).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
BUILD=${1:-$ROOT/build-gpu}
JOBS=${BRAID_JOBS:-$(nproc)}
export PATH=/usr/local/cuda/bin:$PATH

command -v nvidia-smi >/dev/null && nvidia-smi -L
ARCH=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)}
ARCH=${ARCH:-87}
echo "run_gpu_checks: building for sm_$ARCH in $BUILD"
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBRAID_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_CUDA_FLAGS=-lineinfo
cmake --build "$BUILD" -j "$JOBS"

echo "== braid devices --ops"
"$BUILD/tools/braid" devices --ops | tee "$BUILD/devices.txt"
if grep -q "cuda: unavailable" "$BUILD/devices.txt"; then
  echo "run_gpu_checks: no usable GPU; nothing GPU-side was checked" >&2
  exit 1
fi

CUDA_TESTS="$BUILD/tests/braid_cuda_tests"
echo "== CUDA op cases on the GPU"
"$CUDA_TESTS" --gtest_brief=1 | tee "$BUILD/cuda_tests.txt"
if grep -q "no CUDA device" "$BUILD/cuda_tests.txt"; then
  echo "run_gpu_checks: GPU tests skipped for lack of a device" >&2
  exit 1
fi
grep "SKIPPED" "$BUILD/cuda_tests.txt" || true   # declined cases (visible CPU fallbacks)

SANITIZER=${COMPUTE_SANITIZER:-compute-sanitizer}
for tool in memcheck racecheck initcheck synccheck; do
  echo "== compute-sanitizer --tool $tool: CUDA op cases"
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  "$SANITIZER" --tool "$tool" "${extra[@]}" --error-exitcode 99 \
      "$CUDA_TESTS" --gtest_filter='Gpu*' --gtest_brief=1
done

echo "== compute-sanitizer memcheck: zoo and built-in models"
for suite in braid_runtime_tests braid_onnx_tests braid_tools_tests; do
  if [ -x "$BUILD/tests/$suite" ]; then
    "$SANITIZER" --tool memcheck --error-exitcode 99 "$BUILD/tests/$suite" --gtest_brief=1
  fi
done

echo "== op benchmarks (GPU figures are real measurements on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
if [ -x "$BUILD/bench/braid_kernels_bench" ]; then
  "$BUILD/bench/braid_kernels_bench" --benchmark_min_time=0.2 | tee "$BUILD/kernels_bench.txt"
fi
echo "run_gpu_checks: all GPU checks passed"
