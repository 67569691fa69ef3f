#!/usr/bin/env bash
# The bundle's bin/braid: finds NVIDIA's cuDNN and cuBLAS for the CUDA plugin
# (libexec/nvidia_libs.sh says where it looks, in order) and runs
# libexec/braid. Without them braid runs on the CPU and `braid devices` says
# why cuda is unavailable.
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
# shellcheck source=../scripts/nvidia_libs.sh
. "$here/libexec/nvidia_libs.sh"
braid_add_nvidia_libs
exec "$here/libexec/braid" "$@"
