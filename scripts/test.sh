#!/usr/bin/env bash
# Sets up, builds (with AddressSanitizer + UBSan) and runs braid's whole test suite.
#
#   scripts/test.sh            # build dir: build-test/
#
# Then ThreadSanitizer over the engine and runtime suites (scripts/tsan.sh;
# build-tsan/). Also exports the torchvision reference models to ONNX once (build-test/zoo/,
# random weights, no download) for the importer's zoo test, builds the
# benchmarks and examples so they never rot, checks the installed package
# (scripts/check_install.sh; build-install/), the Python package and serving
# (scripts/check_python.sh, scripts/check_serving.sh), and builds and checks the
# release bundle (scripts/bundle.sh, scripts/check_bundle.sh; build-bundle/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BRAID_TEST_BUILD_DIR:-$ROOT/build-test}
JOBS=${BRAID_JOBS:-$(nproc)}

scripts/setup.sh

start=$(date +%s)
# The CUDA backend linked in (not the default plugin): the suite under the sanitizers has
# always run this way; the plugin is what the bundle ships, built and checked below.
# -g1 (line tables: sanitizer reports keep function names and lines): full
# -g made a 5.8 GB build dir, and one CI run's link died with "No space left
# on device".
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DBRAID_SANITIZE=ON -DBRAID_CUDA=AUTO -DBRAID_CUDA_PLUGIN=OFF
cmake --build "$BUILD" -j "$JOBS"
echo "test.sh: build took $(( $(date +%s) - start )) s"

ZOO="$BUILD/zoo"
if [ ! -f "$ZOO/manifest.json" ] || [ scripts/export_torchvision.py -nt "$ZOO/manifest.json" ]; then
  rm -rf "$ZOO"
  /usr/bin/python3 scripts/export_torchvision.py --out "$ZOO"
fi
export BRAID_ZOO_DIR="$ZOO"

# LeakSanitizer on; protobuf's and oneDNN's process-lifetime singletons are not leaks.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS" --timeout 900) | tee "$BUILD/ctest.log"

# ThreadSanitizer (docs/building.md): the engine and runtime suites, built
# alone in build-tsan/; fails on any report.
start=$(date +%s)
scripts/tsan.sh
echo "test.sh: TSan subset in $(( $(date +%s) - start )) s"

# The installed package (docs/install.md): a Release build without sanitizers
# or CUDA, installed to a prefix; examples/ built against it with
# find_package(braid) and with pkg-config, and run.
start=$(date +%s)
scripts/check_install.sh
echo "test.sh: install checked in $(( $(date +%s) - start )) s"

# The Python package (docs/python.md): a wheel (built in check_install.sh's
# build tree, so only the module compiles), a fresh venv, pytest against the
# C++ API (this build's CLI) and ONNX Runtime on two zoo models.
start=$(date +%s)
BRAID_PYTHON_CMAKE_BUILD_DIR="${BRAID_INSTALL_BUILD_DIR:-$ROOT/build-install}" \
  scripts/check_python.sh "$BUILD/tools/braid"
echo "test.sh: Python package built and checked in $(( $(date +%s) - start )) s"

# Serving (docs/serving.md): serving/tests and bench/slim_serving.py --quick in a
# venv with ray[serve], on the wheel check_python.sh just built.
start=$(date +%s)
BRAID_WHEEL="$(ls "${BRAID_PYTHON_BUILD_DIR:-$ROOT/build-python}"/dist/braid-*.whl | head -n 1)" \
  scripts/check_serving.sh
echo "test.sh: serving checked in $(( $(date +%s) - start )) s"

# libFuzzer smoke (docs/fuzzing.md): the readers' fuzz targets, 10 s each from
# seed corpora with a fixed seed, after replaying tests/fuzz/regressions/.
start=$(date +%s)
scripts/fuzz.sh 10
echo "test.sh: fuzz smoke in $(( $(date +%s) - start )) s"

# The aarch64 cross build (docs/jetson.md): the library and the suites of a
# subset cross-built with Debian's arm64 packages, run under qemu-user.
start=$(date +%s)
scripts/test_arm64.sh "${BRAID_ARM64_BUILD_DIR:-$ROOT/build-arm64}"
echo "test.sh: aarch64 cross build and qemu subset in $(( $(date +%s) - start )) s"

# The release bundle (docs/bundle.md), built and checked in a clean
# environment: where the CUDA toolkit is, as on CI.
if [ -x /usr/local/cuda/bin/nvcc ]; then
  start=$(date +%s)
  scripts/bundle.sh
  scripts/check_bundle.sh "$(ls -t "${BRAID_BUNDLE_BUILD_DIR:-$ROOT/build-bundle}"/braid-*-cuda.tar.gz | head -n 1)"
  echo "test.sh: bundle built and checked in $(( $(date +%s) - start )) s"
else
  echo "test.sh: bundle check SKIPPED: no CUDA toolkit at /usr/local/cuda"
fi
# The suite's own closing line last, for whoever reads the end of the log.
grep -E "tests passed, [0-9]+ tests failed out of" "$BUILD/ctest.log" | tail -n 1
