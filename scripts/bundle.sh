#!/usr/bin/env bash
# Builds braid's relocatable release bundle: Release with the CUDA backend as
# a plugin (lib/libbraid_cuda.so, loaded on first use) for sm_87 (Jetson
# Orin) and sm_90 (Hopper) SASS plus sm_90 PTX, and writes
#   build-bundle/braid-VERSION-linux-ARCH-cuda.tar.gz
# holding bin/braid (a launcher), libexec/ (the programs: braid and the GPU
# check's test programs, RUNPATH $ORIGIN/../lib), lib/ (the plugin and every
# shared library they use that a plain CUDA machine lacks: oneDNN, protobuf,
# ONNX's protobuf classes, OpenMP, ...), include/braid/, share/braid/profiles/
# and share/braid/gpu_check/ (bench/gpu_check.sh and its helpers).
# No NVIDIA library is shipped: cuDNN 9 and cuBLAS come from the machine
# (bin/braid's search order: docs/cuda.md, "The bundle").
#
#   scripts/bundle.sh                 # build dir build-bundle/
#   BRAID_BUNDLE_ARCHS="87-real;90-real;90-virtual" scripts/bundle.sh
#
# Then scripts/check_bundle.sh checks it in a clean environment.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BRAID_BUNDLE_BUILD_DIR:-$ROOT/build-bundle}
JOBS=${BRAID_JOBS:-$(nproc)}
ARCHS=${BRAID_BUNDLE_ARCHS:-87-real;90-real;90-virtual}
MAX_MIB=40

scripts/setup.sh
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "bundle: needs the CUDA toolkit with cuDNN 9 and cuBLAS at /usr/local/cuda" >&2
  exit 1
fi

start=$(date +%s)
cmake -S "$ROOT" -B "$BUILD/cmake" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBRAID_CUDA=ON \
      -DBRAID_CUDA_PLUGIN=ON -DBRAID_SANITIZE=OFF -DBRAID_BUILD_BENCH=OFF \
      -DBRAID_BUILD_EXAMPLES=OFF "-DCMAKE_CUDA_ARCHITECTURES=$ARCHS" >/dev/null
PROGRAMS=(braid braid_cuda_tests)
cmake --build "$BUILD/cmake" -j "$JOBS" --target "${PROGRAMS[@]}" braid_cuda
echo "bundle: build took $(( $(date +%s) - start )) s"

VERSION=$(sed -n 's/^project(braid VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
NAME="braid-$VERSION-linux-$(uname -m)-cuda"
OUT="$BUILD/$NAME"
rm -rf "$OUT" "$BUILD/$NAME.tar.gz"
mkdir -p "$OUT/bin" "$OUT/libexec" "$OUT/lib" "$OUT/include" "$OUT/share/braid"

cp "$BUILD/cmake/tools/braid" "$OUT/libexec/braid"
cp "$BUILD/cmake/tests/braid_cuda_tests" "$OUT/libexec/braid_cuda_tests"
cp "$BUILD/cmake/lib/libbraid_cuda.so" "$OUT/lib/"
cp -r include/braid "$OUT/include/"
cp -r profiles "$OUT/share/braid/profiles"
mkdir -p "$OUT/share/braid/gpu_check"
cp bench/gpu_check.sh bench/gpu_check.py "$OUT/share/braid/gpu_check/"
cp scripts/nvidia_libs.sh "$OUT/libexec/"
cp scripts/bundle_launcher.sh "$OUT/bin/braid"
chmod +x "$OUT/bin/braid" "$OUT/share/braid/gpu_check/gpu_check.sh"
cp docs/bundle.md "$OUT/README.md"

# Shared libraries a plain machine has: the C and C++ runtimes. NVIDIA's
# stay out on purpose (the machine's own, matching its driver).
is_system() {
  case "$1" in
    linux-vdso.so*|ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|\
    libstdc++.so*|libgcc_s.so*) return 0 ;;
  esac
  return 1
}
is_nvidia() {
  case "$1" in libcuda.so*|libcudart*|libcudnn*|libcublas*|libnvrtc*) return 0 ;; esac
  return 1
}
# Copies every dependency of the ELF files given, recursively, into lib/.
collect() {
  local todo=("$@") f name path
  while [ ${#todo[@]} -gt 0 ]; do
    f=${todo[0]}
    todo=("${todo[@]:1}")
    while read -r name path; do
      is_system "$name" && continue
      is_nvidia "$name" && continue
      [ -e "$OUT/lib/$name" ] && continue
      if [ -z "$path" ] || [ ! -e "$path" ]; then
        echo "bundle: $f needs $name, which this machine lacks" >&2
        exit 1
      fi
      cp -L "$path" "$OUT/lib/$name"
      todo+=("$OUT/lib/$name")
    done < <(ldd "$f" | awk '/=>/ {print $1, ($3 == "not" ? "" : $3)}')
  done
}
collect "$OUT/libexec/braid" "$OUT/libexec/braid_cuda_tests" "$OUT/lib/libbraid_cuda.so"
for f in "$OUT"/libexec/braid "$OUT"/libexec/braid_cuda_tests; do
  patchelf --set-rpath '$ORIGIN/../lib' "$f"
  strip --strip-unneeded "$f"
done
for f in "$OUT"/lib/*.so*; do
  patchelf --set-rpath '$ORIGIN' "$f"
  strip --strip-unneeded "$f" 2>/dev/null || true
done

tar -C "$BUILD" -czf "$BUILD/$NAME.tar.gz" "$NAME"
bytes=$(stat -c %s "$BUILD/$NAME.tar.gz")
echo "bundle: $BUILD/$NAME.tar.gz ($(( bytes / 1024 / 1024 )) MiB; lib/: $(ls "$OUT/lib" | tr '\n' ' '))"
if [ "$bytes" -gt $(( MAX_MIB * 1024 * 1024 )) ]; then
  echo "bundle: larger than $MAX_MIB MiB" >&2
  exit 1
fi
