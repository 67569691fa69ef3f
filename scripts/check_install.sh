#!/usr/bin/env bash
# Builds braid as a user installs it and checks the installed package, not the
# build tree (docs/install.md):
#   1. a Release build (shared + static libbraid, CUDA off: CPU-only keeps it
#      quick) installed into build-install/prefix; the files are all there;
#   2. libbraid.so has its SONAME and exports include/braid/'s API only;
#   3. examples/ as its own CMake project, find_package(braid 0.2) against the
#      prefix: linking libbraid.so, then libbraid.a; each runs builtin:tiny_cnn;
#   4. the C and frame-loop examples built with plain cc / c++ and
#      `pkg-config --cflags --libs braid` (and --static with libbraid.a), run;
#   5. find_package(braid COMPONENTS cuda) and find_package(braid 0.1) fail
#      cleanly; the installed `braid` runs a model.
#
#   scripts/check_install.sh        # build dir: build-install/ (BRAID_INSTALL_BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BRAID_INSTALL_BUILD_DIR:-$ROOT/build-install}
JOBS=${BRAID_JOBS:-$(nproc)}
PREFIX=$BUILD/prefix
CHECK=$BUILD/check
MODEL=builtin:tiny_cnn

fail() { echo "check_install: FAILED: $*" >&2; exit 1; }

start=$(date +%s)
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
      -DBRAID_CUDA=OFF -DBRAID_SANITIZE=OFF -DBRAID_BUILD_TESTS=OFF -DBRAID_BUILD_BENCH=OFF \
      -DBRAID_BUILD_EXAMPLES=OFF -DBRAID_PYTHON=OFF "-DCMAKE_INSTALL_PREFIX=$PREFIX" > /dev/null
cmake --build "$BUILD" -j "$JOBS"
rm -rf "$PREFIX" "$CHECK"
cmake --install "$BUILD" > /dev/null
mkdir -p "$CHECK"
echo "check_install: build and install took $(( $(date +%s) - start )) s"

# ---- 1. the files ------------------------------------------------------------
LIBDIR=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$BUILD/CMakeCache.txt")
LIB=$PREFIX/$LIBDIR
for f in bin/braid include/braid/braid.h include/braid/braid_c.h include/braid/types.h include/braid/slimmable.h \
         "$LIBDIR/libbraid.a" "$LIBDIR/libbraid.so" "$LIBDIR/libbraid.so.0.2" \
         "$LIBDIR/libbraid.so.0.2.0" "$LIBDIR/cmake/braid/braidConfig.cmake" \
         "$LIBDIR/cmake/braid/braidConfigVersion.cmake" "$LIBDIR/cmake/braid/braidTargets.cmake" \
         "$LIBDIR/pkgconfig/braid.pc"; do
  [ -e "$PREFIX/$f" ] || fail "not installed: $f"
done
ls "$PREFIX"/share/braid/profiles/*.json > /dev/null || fail "no profiles installed"

# ---- 2. SONAME and exported symbols -----------------------------------------
soname=$(readelf -d "$LIB/libbraid.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libbraid.so.0.2 ] || fail "SONAME is '$soname', not libbraid.so.0.2"
nm -D --defined-only "$LIB/libbraid.so" | awk '{print $3}' | c++filt > "$CHECK/exports.txt"
# The public API of include/braid/ (cmake/libbraid.map); anything else leaked.
PUBLIC='^(braid_[a-z0-9_]+|braid::(Session|SlimmableModel|Tensor|TensorInfo|Status)::.*|braid::(DataTypeSize|DataTypeName|StatusCodeName)\(.*\))$'
if grep -vE "$PUBLIC" "$CHECK/exports.txt" > "$CHECK/leaked.txt"; then
  head -n 20 "$CHECK/leaked.txt" >&2
  fail "libbraid.so exports $(wc -l < "$CHECK/leaked.txt") symbols outside the public API"
fi
for sym in '^braid_session_open$' '^braid_session_run$' '^braid::Session::Open\(' \
           '^braid::Tensor::Borrow\(' '^braid::Status::ToString' '^braid::TensorInfo::ToString' \
           '^braid::DataTypeName\(' '^braid::SlimmableModel::Open\(' '^braid_slimmable_open$'; do
  grep -qE "$sym" "$CHECK/exports.txt" || fail "libbraid.so does not export $sym"
done
nm -C --defined-only "$LIB/libbraid.a" 2> /dev/null | grep " T braid::Session::Open(" > /dev/null \
  || fail "libbraid.a lacks braid::Session::Open"
echo "check_install: libbraid.so: SONAME $soname, $(wc -l < "$CHECK/exports.txt") exported symbols, all public"

# ---- 3. examples/ against the package, with find_package(braid 0.2) -----------
expected_cuda=FALSE
[ -e "$LIB/libbraid_cuda.so" ] && expected_cuda=TRUE
for variant in shared static; do
  dir=$CHECK/examples-$variant
  cmake -S "$ROOT/examples" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        "-DCMAKE_PREFIX_PATH=$PREFIX" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
        "-DBRAID_EXAMPLES_STATIC=$([ $variant = static ] && echo ON || echo OFF)" \
        > "$dir.configure.txt" || { cat "$dir.configure.txt"; fail "configure examples ($variant)"; }
  grep -q "at $LIB/cmake/braid: .*cuda component $expected_cuda" "$dir.configure.txt" \
    || { cat "$dir.configure.txt"; fail "examples ($variant) did not find the installed braid"; }
  cmake --build "$dir" -j "$JOBS" > "$dir.build.txt" || { cat "$dir.build.txt"; fail "build examples ($variant)"; }
  if [ $variant = shared ]; then
    ldd "$dir/run_model" | grep "libbraid.so.0.2 => $LIB/libbraid.so.0.2" > /dev/null \
      || fail "examples-shared/run_model does not load $LIB/libbraid.so.0.2"
  else
    readelf -d "$dir/run_model" | grep "libbraid.so" > /dev/null \
      && fail "examples-static/run_model needs libbraid.so"
  fi
  ctest --test-dir "$dir" --output-on-failure > "$dir.ctest.txt" \
    || { cat "$dir.ctest.txt"; fail "examples ($variant) failed"; }
  echo "check_install: examples/ with find_package ($variant): $(grep -E 'tests passed' "$dir.ctest.txt")"
done
"$CHECK/examples-shared/frame_loop" "$MODEL" 2 50 | sed 's/^/  /'

# ---- 4. the C and frame-loop examples with pkg-config --------------------------
export PKG_CONFIG_PATH=$LIB/pkgconfig
[ "$(pkg-config --modversion braid)" = 0.2.0 ] || fail "pkg-config --modversion braid"
PC=$CHECK/pkg-config
mkdir -p "$PC"
rpath="-Wl,-rpath,$(pkg-config --variable=libdir braid)"
# shellcheck disable=SC2046  # pkg-config's flags are meant to split
cc -std=c11 -Wall -Wextra -Werror -o "$PC/run_model_c" "$ROOT/examples/run_model_c.c" \
   $(pkg-config --cflags --libs braid) "$rpath"
# shellcheck disable=SC2046
c++ -std=c++20 -Wall -Wextra -Werror -o "$PC/frame_loop" "$ROOT/examples/frame_loop.cc" \
    $(pkg-config --cflags --libs braid) -pthread "$rpath"
# libbraid.a beside libbraid.so: -l:libbraid.a picks the archive, --static adds its deps.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$PC/run_model_c_static" "$ROOT/examples/run_model_c.c" \
   $(pkg-config --cflags braid) $(pkg-config --libs --static braid | sed 's/-lbraid\b/-l:libbraid.a/')
readelf -d "$PC/run_model_c_static" | grep "libbraid.so" > /dev/null \
  && fail "run_model_c_static needs libbraid.so"
for prog in run_model_c run_model_c_static; do
  "$PC/$prog" "$MODEL" > "$PC/$prog.txt" || { cat "$PC/$prog.txt"; fail "$prog"; }
  grep -q "^output output rank 2" "$PC/$prog.txt" || fail "$prog: $(cat "$PC/$prog.txt")"
done
"$PC/frame_loop" "$MODEL" 2 20 > "$PC/frame_loop.txt" || { cat "$PC/frame_loop.txt"; fail frame_loop; }
grep -q "2 threads x 20 frames: outputs match" "$PC/frame_loop.txt" || fail "frame_loop: $(cat "$PC/frame_loop.txt")"
echo "check_install: pkg-config: run_model_c (libbraid.so, libbraid.a) and frame_loop built with cc / c++ and ran"

# ---- 5. what must fail, and the installed CLI ----------------------------------
FP=$CHECK/find_package
mkdir -p "$FP"
cat > "$FP/CMakeLists.txt" << 'EOF'
cmake_minimum_required(VERSION 3.22)
project(find_braid NONE)
find_package(braid ${WANT_VERSION} REQUIRED COMPONENTS ${WANT_COMPONENTS})
EOF
if [ $expected_cuda = FALSE ]; then
  if cmake -S "$FP" -B "$FP/cuda" "-DCMAKE_PREFIX_PATH=$PREFIX" -DWANT_VERSION=0.2 \
       -DWANT_COMPONENTS=cuda > "$FP/cuda.txt" 2>&1; then
    fail "find_package(braid COMPONENTS cuda) succeeded without the CUDA plugin"
  fi
  grep -q 'required component "cuda"' "$FP/cuda.txt" || { cat "$FP/cuda.txt"; fail "cuda component message"; }
fi
if cmake -S "$FP" -B "$FP/old" "-DCMAKE_PREFIX_PATH=$PREFIX" -DWANT_VERSION=0.1 \
     > "$FP/old.txt" 2>&1; then
  fail "find_package(braid 0.1) accepted braid 0.2"
fi
grep -q "0.2.0" "$FP/old.txt" || { cat "$FP/old.txt"; fail "find_package(braid 0.1) message"; }
"$PREFIX/bin/braid" --help > /dev/null || fail "installed braid --help"
"$PREFIX/bin/braid" run "$MODEL" --iterations 2 > "$CHECK/braid_run.txt" || fail "installed braid run"
grep -q "^latency" "$CHECK/braid_run.txt" || fail "installed braid run: $(cat "$CHECK/braid_run.txt")"
echo "check_install: find_package(braid COMPONENTS cuda) / (braid 0.1) fail cleanly; installed braid runs"
echo "check_install: OK in $(( $(date +%s) - start )) s"
