#!/usr/bin/env bash
# Cross-compiles the sparse CPU kernels (kernels/cpu/sparse/, portable path:
# plain C++ that GCC vectorises with NEON) with their equivalence tests
# against kernels/reference for aarch64, and runs them under qemu-user. The
# Jetson (ARM) path is exercised without ARM hardware. Not part of CI.
#
#   scripts/test_aarch64_sparse.sh [BUILD_DIR]     # default build-aarch64-sparse
#
# Minimal standalone build, no CMake and no oneDNN: the IR and shape
# inference (graph/), kernel params, reference kernels, the sparse kernels,
# tests/sparse/sparse_kernels_test.cc and GoogleTest from Debian's source
# package (/usr/src/googletest), all compiled with aarch64-linux-gnu-g++.
# Installs g++-aarch64-linux-gnu and qemu-user with apt-get when missing
# (root or sudo needed then).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-${repo}/build-aarch64-sparse}")"
cxx=aarch64-linux-gnu-g++
jobs="$(nproc)"

missing=()
command -v "${cxx}" >/dev/null || missing+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
[ -f /usr/src/googletest/googletest/src/gtest-all.cc ] || missing+=(googletest)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "aarch64: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=sudo
  fi
  echo "aarch64: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

mkdir -p "${out}/obj"
flags=(-std=c++20 -O2 -fopenmp -Wall -Wextra -Werror -Wno-missing-field-initializers
       -I"${repo}" -I"${repo}/include")
gtest=/usr/src/googletest/googletest
sources=(
  "${repo}"/graph/ir.cc "${repo}"/graph/op_schema.cc "${repo}"/graph/ops/*.cc
  "${repo}"/graph/passes/shape_inference.cc
  "${repo}"/kernels/backend.cc "${repo}"/kernels/params/*.cc "${repo}"/kernels/reference/*.cc
  "${repo}"/kernels/cpu/sparse/*.cc
  "${repo}"/tests/sparse/sparse_kernels_test.cc "${repo}"/tests/sparse/sparse_test_util.cc
)

# Compile in parallel; each object named after its path. An object is
# rebuilt when its source or any header it includes (gcc -MMD) is newer.
objects=()
compile() {  # src obj extra-flags...
  local src="$1" obj="$2"; shift 2
  local stale=0
  if [ ! -f "${obj}" ] || [ ! -f "${obj}.d" ]; then
    stale=1
  else
    for dep in $(sed -e 's/^[^:]*://' -e 's/\\$//' "${obj}.d"); do
      if [ "${dep}" -nt "${obj}" ]; then stale=1; break; fi
    done
  fi
  if [ "${stale}" -eq 1 ]; then
    "${cxx}" "$@" -MMD -MF "${obj}.d" -c "${src}" -o "${obj}"
  fi
}
export -f compile
pids=()
for src in "${sources[@]}"; do
  obj="${out}/obj/$(echo "${src#"${repo}"/}" | tr '/' '_').o"
  objects+=("${obj}")
  compile "${src}" "${obj}" "${flags[@]}" &
  pids+=($!)
  if [ ${#pids[@]} -ge "${jobs}" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
for obj_src in gtest-all gtest_main; do
  obj="${out}/obj/${obj_src}.o"
  objects+=("${obj}")
  compile "${gtest}/src/${obj_src}.cc" "${obj}" -std=c++20 -O2 -I"${gtest}" -I"${gtest}/include" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "${p}"; done

echo "aarch64: linking ${out}/braid_sparse_tests_aarch64"
"${cxx}" -fopenmp -static -o "${out}/braid_sparse_tests_aarch64" "${objects[@]}" -lpthread
file "${out}/braid_sparse_tests_aarch64" | sed 's/^/aarch64: /'

echo "aarch64: running under qemu-aarch64"
# Static binary: no aarch64 sysroot needed at run time. Only the portable
# instruction set exists there, so every case runs the portable kernels.
qemu-aarch64 "${out}/braid_sparse_tests_aarch64" --gtest_brief=1
