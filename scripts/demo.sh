#!/usr/bin/env bash
# braid's main job on a built-in default: set up, build, convert a model to
# .braid (per-node annotations), run it on the CPU and print where each node
# ran (implementation, fallbacks) and the latency; then plan it for CPU +
# virtual GPU with the `partition` policy on the host-vgpu profile (simulated
# figures, labelled) and run that plan on the CPU and the vgpu virtual device
# (CPU kernels on their own thread and memory: not a GPU measurement).
#
#   scripts/demo.sh [MODEL]     # MODEL defaults to builtin:mobilenet_v2
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BRAID_BUILD_DIR:-$ROOT/build}
MODEL=${1:-builtin:mobilenet_v2}

scripts/setup.sh
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBRAID_BUILD_TESTS=OFF -DBRAID_BUILD_BENCH=OFF -DBRAID_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target braid

OUT="$BUILD/$(basename "${MODEL#builtin:}" .onnx).braid"
"$BUILD/tools/braid" convert "$MODEL" -o "$OUT"
"$BUILD/tools/braid" inspect "$OUT" | awk 'NR <= 6 || /^total/'
echo "..."
"$BUILD/tools/braid" run "$OUT" --iterations 20 --warmup 3
PLAN="${OUT%.braid}.plan.json"
"$BUILD/tools/braid" plan "$OUT" --profile host-vgpu --policy partition --save "$PLAN" | tail -8
"$BUILD/tools/braid" run "$OUT" --devices cpu,vgpu --plan "$PLAN" --iterations 10 --warmup 2 \
  | grep -v "^  node "
