# Sourced by the bundle's bin/braid and gpu_check.sh (bash). Puts the
# directories that hold NVIDIA's cuDNN 9 and cuBLAS 13 on LD_LIBRARY_PATH for
# lib/libbraid_cuda.so, in this order (docs/cuda.md, "The bundle"):
#   1. LD_LIBRARY_PATH as the caller set it: the caller's choice wins;
#   2. the system CUDA install: $CUDA_HOME/lib64, /usr/local/cuda/lib64,
#      /usr/local/cuda/lib (and whatever ld.so.conf lists, after all of these);
#   3. NVIDIA's pip wheels of the python3 on PATH (nvidia-cudnn-cu13,
#      nvidia-cublas, as PyTorch installs them), then torch/lib.
# A directory is added only when it holds one of those libraries.
# BRAID_NVIDIA_LIBS lists what was added (empty: none found).

braid_nvidia_wanted=(libcudnn.so.9 libcublas.so.13 libcublasLt.so.13)

braid_nvidia_has() {
  local lib
  for lib in "${braid_nvidia_wanted[@]}"; do
    [ -e "$1/$lib" ] && return 0
  done
  return 1
}

braid_add_nvidia_libs() {
  local dirs=() dir
  for dir in ${CUDA_HOME:+"$CUDA_HOME/lib64"} /usr/local/cuda/lib64 /usr/local/cuda/lib; do
    braid_nvidia_has "$dir" && dirs+=("$dir")
  done
  if command -v python3 >/dev/null 2>&1; then
    local roots
    roots=$(python3 - 2>/dev/null <<'PY' || true
import importlib.util, os
for name in ("nvidia", "torch"):
    spec = importlib.util.find_spec(name)
    if spec and spec.submodule_search_locations:
        for p in spec.submodule_search_locations:
            print(p)
PY
)
    local root
    while read -r root; do
      [ -n "$root" ] || continue
      while read -r dir; do
        [ -n "$dir" ] && braid_nvidia_has "$dir" && dirs+=("$dir")
      done < <(find "$root" -maxdepth 4 \( -name 'libcudnn.so.9' -o -name 'libcublas.so.13' \
                 -o -name 'libcublasLt.so.13' \) -printf '%h\n' 2>/dev/null | sort -u)
    done <<< "$roots"
  fi
  BRAID_NVIDIA_LIBS=""
  for dir in "${dirs[@]}"; do
    case ":$BRAID_NVIDIA_LIBS:" in *":$dir:"*) continue ;; esac
    BRAID_NVIDIA_LIBS="${BRAID_NVIDIA_LIBS:+$BRAID_NVIDIA_LIBS:}$dir"
  done
  if [ -n "$BRAID_NVIDIA_LIBS" ]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$BRAID_NVIDIA_LIBS"
  fi
  export BRAID_NVIDIA_LIBS
}
