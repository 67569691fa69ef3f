#!/usr/bin/env bash
# Checks braid's release bundle (scripts/bundle.sh) in a clean environment:
#   1. ldd under `env -i`: every library of libexec/* and lib/* resolves into
#      the bundle's lib/ or to the C / C++ runtime; only NVIDIA's (cuDNN,
#      cuBLAS) may be missing, and only for lib/libbraid_cuda.so and
#      libexec/braid_cuda_tests; libexec/braid needs no NVIDIA library;
#   2. bin/braid runs builtin:mobilenet_v2 on the CPU and `braid devices`
#      lists cpu and either a GPU or why cuda is unavailable;
#   3. with NVIDIA's libraries out of sight (the dynamic loader's cache off,
#      no LD_LIBRARY_PATH: as on a machine without them) braid still runs on
#      the CPU and `braid devices` names the library that is missing;
#   4. without the plugin, or with a broken one: a one-line reason, the CPU works;
#   5. the bundled gpu_check.sh starts, and on a machine without a GPU stops
#      saying so.
#
#   scripts/check_bundle.sh build-bundle/braid-VERSION-linux-ARCH-cuda.tar.gz
set -euo pipefail
TARBALL=$(readlink -f "$1")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
tar -C "$WORK" -xzf "$TARBALL"
B=$(echo "$WORK"/braid-*)
CLEAN=(env -i PATH=/usr/bin:/bin HOME="$WORK")
fail() { echo "check_bundle: FAIL: $*" >&2; exit 1; }

echo "== 1. libraries (ldd, env -i)"
for f in "$B"/libexec/braid "$B"/libexec/braid_cuda_tests "$B"/lib/*.so*; do
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    case "$name" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++.so*|libgcc_s.so*) continue ;;
      libcudnn*|libcublas*|libcudart*|libcuda.so*)
        case "$f" in */libbraid_cuda.so|*/braid_cuda_tests) continue ;; esac
        fail "$(basename "$f") needs NVIDIA's $name" ;;
    esac
    path=$(readlink -f "$path" 2>/dev/null || echo "$path")
    case "$path" in
      "$B"/lib/*) ;;
      *) fail "$(basename "$f") takes $name from '$path', not from the bundle's lib/" ;;
    esac
  done < <("${CLEAN[@]}" ldd "$f")
done
echo "ok: every library outside the C/C++ runtime and NVIDIA's comes from lib/"

echo "== 2. bin/braid on the CPU (env -i)"
"${CLEAN[@]}" "$B/bin/braid" run builtin:mobilenet_v2 --iterations 2 --warmup 1 --threads 2 \
  > "$WORK/run.txt" || fail "braid run builtin:mobilenet_v2"
grep -q "^latency" "$WORK/run.txt" || fail "no latency line: $(cat "$WORK/run.txt")"
grep "^latency" "$WORK/run.txt"
"${CLEAN[@]}" "$B/bin/braid" devices > "$WORK/devices.txt" || fail "braid devices"
cat "$WORK/devices.txt"
grep -q "^cpu:" "$WORK/devices.txt" || fail "braid devices lists no cpu"
grep -qE "^cuda(:[0-9]+)?: " "$WORK/devices.txt" || fail "braid devices says nothing of cuda"

echo "== 3. no NVIDIA library in sight"
# The program's own interpreter: with other architectures' loaders installed
# (scripts/setup_arm64.sh puts /lib/ld-linux-aarch64.so.1 beside x86-64's), a
# glob would pick the wrong one.
LOADER=$(readelf -l "$B/libexec/braid" 2>/dev/null |
         sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
[ -n "$LOADER" ] || fail "no dynamic loader found"
"${CLEAN[@]}" "$LOADER" --inhibit-cache "$B/libexec/braid" devices > "$WORK/nonv.txt" \
  || fail "braid devices without NVIDIA libraries"
cat "$WORK/nonv.txt"
if ! ldconfig -p | grep -qE "libcudnn.so.9 .*=> /(usr/)?lib/"; then
  grep -qE "^cuda: unavailable: .*(libcudnn|libcublas)[^ ]*: cannot open shared object file" \
    "$WORK/nonv.txt" || fail "the reason does not name the missing NVIDIA library"
fi
"${CLEAN[@]}" "$LOADER" --inhibit-cache "$B/libexec/braid" run builtin:tiny_cnn --iterations 1 \
  > /dev/null || fail "braid run on the CPU without NVIDIA libraries"

echo "== 4. no plugin / a broken plugin"
mv "$B/lib/libbraid_cuda.so" "$WORK/plugin.so"
"${CLEAN[@]}" "$B/bin/braid" devices | tee "$WORK/noplugin.txt" | grep "^cuda"
grep -q "^cuda: unavailable: the CUDA backend plugin libbraid_cuda.so was not found" \
  "$WORK/noplugin.txt" || fail "no reason for a missing plugin"
echo "not an ELF file" > "$B/lib/libbraid_cuda.so"
"${CLEAN[@]}" "$B/bin/braid" devices | tee "$WORK/badplugin.txt" | grep "^cuda"
grep -q "^cuda: unavailable: the CUDA backend (.*) did not load" "$WORK/badplugin.txt" \
  || fail "no reason for a broken plugin"
"${CLEAN[@]}" "$B/bin/braid" run builtin:tiny_cnn --iterations 1 > /dev/null \
  || fail "braid run with a broken plugin"
mv "$WORK/plugin.so" "$B/lib/libbraid_cuda.so"

echo "== 5. gpu_check.sh starts"
if "${CLEAN[@]}" "$B/share/braid/gpu_check/gpu_check.sh" "$WORK/gpu_check" > "$WORK/gpu_check.txt" 2>&1; then
  grep -q "gpu: ok" "$WORK/gpu_check/summary.txt" || fail "gpu_check.sh passed without a gpu step"
else
  grep -q "braid sees no GPU" "$WORK/gpu_check.txt" || { cat "$WORK/gpu_check.txt"; fail "gpu_check.sh"; }
  echo "ok: stopped at step 1 (no GPU here)"
fi

echo "check_bundle: ok ($(basename "$TARBALL"), $(( $(stat -c %s "$TARBALL") / 1024 / 1024 )) MiB)"
