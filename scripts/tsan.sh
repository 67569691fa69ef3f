#!/usr/bin/env bash
# ThreadSanitizer over the suites that exercise braid's threads (issue 32):
# braid_engine_tests (streams on worker threads, vgpu workers, events, the
# Session over the engine; twice, the second time with the vgpu's CUDA
# semantics, as CTest runs it) and braid_runtime_tests (concurrent Runs of
# one Session, Sessions on several threads, the C API, adaptation, thread
# adaptation and pinning, tests/runtime/stability_test.cc). Built alone in
# its own folder: BRAID_TSAN=ON, CUDA off, only these two targets.
#
#   scripts/tsan.sh                 # build dir build-tsan/ (BRAID_TSAN_BUILD_DIR)
#   scripts/tsan.sh --gtest_filter='Stability.*'   # extra arguments go to every suite
#
# Exit status 1 when a test fails or TSan reports anything (exitcode 66 per
# suite; every report is kept in build-tsan/tsan-<suite>.log).
#
# OpenMP: Debian's libgomp (and oneDNN, built on it) is not instrumented, so
# TSan cannot see its barriers and would report every parallel region's
# hand-off of data between team members (checked: 103 such reports with teams
# of two, none elsewhere; docs/building.md). OMP_THREAD_LIMIT=1 makes every
# team one thread (libgomp's own variable, read at its start; braid reads no
# environment), so what TSan checks is braid's threading: Sessions, engine
# streams, vgpu workers, events, the C API. No suppressions.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BRAID_TSAN_BUILD_DIR:-$ROOT/build-tsan}
JOBS=${BRAID_JOBS:-$(nproc)}

start=$(date +%s)
# -O1 -g1: TSan's slowdown is 5-15x; line tables keep reports readable.
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
      -DBRAID_TSAN=ON -DBRAID_CUDA=OFF -DBRAID_BUILD_BENCH=OFF -DBRAID_BUILD_EXAMPLES=OFF \
      -DBRAID_PYTHON=OFF > /dev/null
cmake --build "$BUILD" -j "$JOBS" --target braid_engine_tests braid_runtime_tests
echo "tsan.sh: built in $(( $(date +%s) - start )) s"

export OMP_THREAD_LIMIT=1
export TSAN_OPTIONS="halt_on_error=0:exitcode=66:second_deadlock_stack=1:history_size=4"
status=0
run() {  # name, binary, [gtest arguments...]; VGPU_SEMANTICS from the caller
  local name=$1 bin=$2
  shift 2
  local log=$BUILD/tsan-$name.log t0
  t0=$(date +%s)
  if "$bin" --gtest_brief=1 "$@" "${EXTRA[@]}" > "$log" 2>&1; then
    echo "tsan.sh: $name: $(grep -E '^\[  PASSED  \]' "$log" | tail -n 1), 0 TSan reports, $(( $(date +%s) - t0 )) s"
  else
    local rc=$? reports
    reports=$(grep -c '^WARNING: ThreadSanitizer' "$log" || true)
    grep -E '^WARNING: ThreadSanitizer|^\[  FAILED  \]|^SUMMARY' "$log" | head -n 40 >&2 || true
    echo "tsan.sh: $name: FAILED (exit $rc, $reports TSan reports; $log)" >&2
    status=1
  fi
}
EXTRA=("$@")
run engine "$BUILD/tests/braid_engine_tests"
BRAID_TEST_VGPU_SEMANTICS=cuda run engine_cuda_semantics "$BUILD/tests/braid_engine_tests"
# Not here: the built-in models against the reference kernels (one thread,
# minutes under TSan for numerics the ASan suite checks).
run runtime "$BUILD/tests/braid_runtime_tests" \
  --gtest_filter='-Models/BuiltinModel.*:Models/BuiltinModelNanInf.*'

echo "tsan.sh: $( [ $status -eq 0 ] && echo "0 reports, all passed" || echo FAILED ) in $(( $(date +%s) - start )) s"
exit $status
