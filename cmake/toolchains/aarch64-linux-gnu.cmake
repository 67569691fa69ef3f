# Cross-compiling braid for aarch64 Linux (CPU only) on a Debian 12 amd64 host
# with Debian's arm64 multiarch packages (scripts/setup_arm64.sh installs
# them), and running its tests under qemu-user:
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#         -DBRAID_CUDA=OFF -DBRAID_BUILD_BENCH=OFF
#
# scripts/test_arm64.sh does this, builds, and runs a test subset. For a
# Jetson with CUDA see jetson-aarch64.cmake (a copy of the device's root
# file system) or build natively on the device (docs/jetson.md).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Debian's multiarch layout: arm64 libraries in /usr/lib/aarch64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# libdnnl-dev:arm64 and libonnx-dev:arm64 cannot be installed beside their
# amd64 twins; setup_arm64.sh unpacks them here. Searched before / so their
# arm64 dnnl_config.h wins over the amd64 one in /usr/include.
if(NOT DEFINED BRAID_ARM64_DEV_ROOT)
  set(BRAID_ARM64_DEV_ROOT /opt/braid-arm64-dev)
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES BRAID_ARM64_DEV_ROOT)
set(CMAKE_FIND_ROOT_PATH ${BRAID_ARM64_DEV_ROOT} /)

# Libraries, headers and CMake packages: only the arm64 ones (the re-rooted
# prefixes above, through CMAKE_LIBRARY_ARCHITECTURE). Programs: the host's,
# since protoc and flatc run at build time (amd64 protobuf-compiler 3.21.12 and
# flatbuffers-compiler 2.0.8, the same versions as the arm64 libraries).
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest (and gtest_discover_tests) run the test programs under qemu-user, as
# a Cortex-A76: Armv8.2-A without SVE like a Jetson Orin's Cortex-A78AE (qemu
# 7.2 has no A78 model). qemu's default "max" CPU has 512-bit SVE, on which
# oneDNN 2.6 picks its jit:sve_512 convolutions, and a Conv with a fused
# HardSwish gives wrong numbers there under qemu
# (OnednnConv.EveryFusedActivation; not checked on SVE hardware); no Jetson
# has SVE. No -L /usr/aarch64-linux-gnu: the programs link multiarch
# libraries (libdnnl2:arm64 ...) that need libc6:arm64 anyway, and with -L
# qemu would take the cross ld.so (libc6-arm64-cross) but libc.so.6 from
# /lib/aarch64-linux-gnu, two different glibc builds.
find_program(BRAID_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(BRAID_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${BRAID_QEMU_AARCH64} -cpu cortex-a76)
endif()
