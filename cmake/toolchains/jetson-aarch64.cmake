# Cross-compiling braid for an NVIDIA Jetson (aarch64, JetPack's CUDA) from an
# x86-64 host. A native build on the Jetson needs no toolchain file and is
# the recommended path (docs/cuda.md); use this one when the Jetson is too
# slow or too small to build on.
#
#   cmake -S . -B build-jetson -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/jetson-aarch64.cmake \
#         -DJETSON_SYSROOT=/path/to/jetson-rootfs -DBRAID_CUDA=ON
#
# JETSON_SYSROOT: a copy of the Jetson's root file system (e.g. rsync'ed
# /usr, /lib and /usr/local/cuda from the device, or the L4T sample rootfs
# with JetPack's CUDA, cuDNN and cuBLAS installed) holding every dependency
# braid links (oneDNN, protobuf, onnx, flatbuffers, GoogleTest, benchmark).
# CUDA_TOOLKIT_ROOT: an x86-64 host nvcc able to target aarch64 (NVIDIA's
# cuda-cross-aarch64 packages of the same CUDA version as JetPack).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(JETSON_SYSROOT "$ENV{JETSON_SYSROOT}" CACHE PATH "Jetson root file system copy")
set(CUDA_TOOLKIT_ROOT "/usr/local/cuda" CACHE PATH "host CUDA toolkit with aarch64 cross support")

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CUDA_COMPILER ${CUDA_TOOLKIT_ROOT}/bin/nvcc)
set(CMAKE_CUDA_HOST_COMPILER aarch64-linux-gnu-g++)
# Jetson Orin (sm_87); Xavier would be 72.
set(CMAKE_CUDA_ARCHITECTURES 87 CACHE STRING "Jetson Orin")

if(JETSON_SYSROOT)
  set(CMAKE_SYSROOT ${JETSON_SYSROOT})
  set(CMAKE_FIND_ROOT_PATH ${JETSON_SYSROOT})
  # JetPack installs CUDA, cuDNN and cuBLAS here on the device.
  set(CUDAToolkit_ROOT ${JETSON_SYSROOT}/usr/local/cuda)
  list(APPEND CMAKE_LIBRARY_PATH ${JETSON_SYSROOT}/usr/lib/aarch64-linux-gnu
       ${JETSON_SYSROOT}/usr/local/cuda/targets/aarch64-linux/lib)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)   # flatc, protoc: run the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
