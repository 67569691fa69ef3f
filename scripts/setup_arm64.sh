#!/usr/bin/env bash
# Installs what the aarch64 cross build (scripts/test_arm64.sh) needs on a
# Debian 12 amd64 host: the aarch64 GNU cross compilers, qemu-user, and
# braid's dependencies for arm64 from Debian's multiarch packages.
# Idempotent: adds the arm64 architecture and installs only what is missing.
# Needs root (or sudo). Does not touch the amd64 packages scripts/setup.sh
# installs (checked with apt-get install -s on Debian 12: nothing amd64 is
# removed; apt may bring a few amd64 libraries shared with their new arm64
# twins, e.g. libssl3 or libkrb5-3, to the same point release).
#
#   scripts/setup_arm64.sh [DEV_ROOT]     # DEV_ROOT: default /opt/braid-arm64-dev
#
# Two -dev packages are not co-installable with their amd64 twins in Debian 12
# (dpkg refuses to unpack them): libdnnl-dev:arm64 (its dnnl_config.h says
# DNNL_GPU_RUNTIME NONE where amd64's says OCL) and libonnx-dev:arm64 (it
# needs libonnxifi:arm64, which ships /usr/lib/libonnxifi.so, not a multiarch
# path). Those, with their runtime libraries, are unpacked (dpkg-deb -x, not
# installed) into DEV_ROOT, which cmake/toolchains/aarch64-linux-gnu.cmake
# searches before /. The runtime libraries libdnnl2:arm64 and libonnx1:arm64
# are also installed normally, so the test programs find them under qemu.
set -euo pipefail

DEV_ROOT="${1:-/opt/braid-arm64-dev}"

PACKAGES=(
  g++-aarch64-linux-gnu qemu-user          # cross compilers (+ libgomp), emulator
  libdnnl2:arm64                           # oneDNN 2.6 (headers and CMake config: DEV_ROOT)
  libonnx1:arm64                           # ONNX (headers and CMake config: DEV_ROOT)
  libprotobuf-dev:arm64                    # same 3.21.12 as the amd64 protoc
  libflatbuffers-dev:arm64                 # same 2.0.8 as the amd64 flatc
  libgtest-dev:arm64
)
# Unpacked into DEV_ROOT (see above).
DEV_DEBS=(libdnnl-dev:arm64 libdnnl2:arm64 libonnx-dev:arm64 libonnx1:arm64 libonnxifi:arm64)
# Build-time tools and arch-independent headers run / come from the host.
HOST_PACKAGES=(cmake ninja-build file protobuf-compiler flatbuffers-compiler libeigen3-dev
               libonnx-testdata)  # the ONNX backend cases test_arm64.sh runs

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup_arm64: need root or sudo" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive

updated=0
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup_arm64: dpkg --add-architecture arm64"
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -q
  updated=1
fi

missing=()
for p in "${PACKAGES[@]}" "${HOST_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$updated" -eq 1 ] || $SUDO apt-get update -q
  updated=1
  echo "setup_arm64: installing ${missing[*]}"
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup_arm64: all $(( ${#PACKAGES[@]} + ${#HOST_PACKAGES[@]} )) packages present"
fi

# DEV_ROOT records which versions it holds; redo it when apt has others.
want=""
for p in "${DEV_DEBS[@]}"; do
  want+="${p}=$(apt-cache policy "$p" | awk '/Candidate:/ {print $2}')"$'\n'
done
if [ -f "${DEV_ROOT}/.braid-debs" ] && [ "$(cat "${DEV_ROOT}/.braid-debs")" = "${want%$'\n'}" ]; then
  echo "setup_arm64: ${DEV_ROOT} up to date"
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
chmod 755 "${tmp}"  # apt-get download runs as _apt where it can
(cd "${tmp}" && apt-get download -q "${DEV_DEBS[@]}")
$SUDO rm -rf "${DEV_ROOT}"
$SUDO mkdir -p "${DEV_ROOT}"
for deb in "${tmp}"/*.deb; do
  $SUDO dpkg-deb -x "${deb}" "${DEV_ROOT}"
done
printf '%s' "${want%$'\n'}" | $SUDO tee "${DEV_ROOT}/.braid-debs" >/dev/null
echo "setup_arm64: unpacked ${DEV_DEBS[*]} into ${DEV_ROOT}"
