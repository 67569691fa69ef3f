#!/usr/bin/env bash
# braid's main job on a built-in default, end to end:
#   1. set up (Debian packages) and build the `braid` tool;
#   2. convert builtin:mobilenet_v2 to .braid (per-node FLOPs, bytes,
#      intensity, sparsity) and run it on the CPU: placements + latency;
#   3. calibrate this host into a device profile (without a GPU: the CPU and
#      the vgpu's padding), train the SparOA policy (threshold predictor +
#      SAC, on the simulator) for it, plan the model with `sparoa`, and print
#      the placement summary with the SIMULATED latency;
#   4. run that plan on the devices present: the CPU and a CUDA GPU when one
#      answers, else the CPU and `vgpu`, the virtual GPU (CPU kernels on their
#      own thread and memory, padded to an Orin-like timing model: labelled
#      virtual, never a GPU measurement).
#
#   scripts/demo.sh [MODEL]     # MODEL defaults to builtin:mobilenet_v2
# BRAID_PROFILE picks the device profile used when a CUDA GPU answers
# (default jetson-orin-nano-8gb; `braid calibrate` writes one for this host).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BRAID_BUILD_DIR:-$ROOT/build}
MODEL=${1:-builtin:mobilenet_v2}

scripts/setup.sh
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DBRAID_BUILD_TESTS=OFF -DBRAID_BUILD_BENCH=OFF -DBRAID_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target braid
BRAID="$BUILD/tools/braid"

echo "== convert"
OUT="$BUILD/$(basename "${MODEL#builtin:}" .onnx).braid"
"$BRAID" convert "$MODEL" -o "$OUT"
"$BRAID" inspect "$OUT" | awk 'NR <= 6 || /^total/'
echo "..."
echo "== run on the CPU"
"$BRAID" run "$OUT" --iterations 20 --warmup 3

# The devices present: a CUDA GPU if one answers, else the virtual GPU.
if "$BRAID" devices --json | grep -q '"kind":"cuda"'; then
  DEVICES=cpu,cuda
  PROFILE=${BRAID_PROFILE:-jetson-orin-nano-8gb}
  RUN_FLAGS=()
else
  DEVICES=cpu,vgpu
  RUN_FLAGS=(--vgpu-timing orin-like)
  echo "== no CUDA GPU answers: cpu + vgpu (virtual; its figures are not GPU measurements)"
  echo "== calibrate this host's CPU (and the vgpu's padding) into a device profile"
  PROFILE="$BUILD/host-vgpu-calibrated.json"
  "$BRAID" calibrate --devices cpu,vgpu --iterations 5 --out "$PROFILE" | tail -3
fi

echo "== train the SparOA policy on the $(basename "$PROFILE" .json) profile (simulated)"
POLICY="$BUILD/sparoa-$(basename "$PROFILE" .json).bin"
"$BRAID" train --policy sparoa --profiles "$PROFILE" --episodes 300 --out "$POLICY" | tail -4
echo "== plan with sparoa"
PLAN="${OUT%.braid}.plan.json"
"$BRAID" plan "$OUT" --profile "$PROFILE" --policy sparoa --policy-file "$POLICY" \
  --save "$PLAN" | tail -8
echo "== run the plan on $DEVICES"
"$BRAID" run "$OUT" --devices "$DEVICES" --plan "$PLAN" "${RUN_FLAGS[@]}" \
  --iterations 10 --warmup 2 | grep -v "^  node "
