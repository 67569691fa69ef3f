#!/usr/bin/env bash
# Builds braid's libFuzzer targets with clang (tests/fuzz/, BRAID_FUZZ=ON:
# AddressSanitizer + UBSan + coverage) and runs each for SECONDS from seed
# corpora, after replaying tests/fuzz/regressions/ (inputs that once crashed).
#
#   scripts/fuzz.sh              # CI's smoke run: 10 s per target, fixed seed
#   scripts/fuzz.sh 3600         # a campaign: an hour per target (docs/fuzzing.md)
#   scripts/fuzz.sh 60 fuzz_npy  # one target
#   scripts/fuzz.sh --runs 10000000 fuzz_npy  # a campaign of N executions, no time limit
#   BRAID_FUZZ_SANITIZERS=undefined BRAID_FUZZ_TRACE_CMP=OFF BRAID_FUZZ_BUILD_DIR=build-fuzz-fast \
#     scripts/fuzz.sh --runs 10000000 fuzz_passes  # without ASan and comparison tracing: ~5x faster
#
# Seeds: the .braid file in tests/data, ONNX's backend node models
# (libonnx-testdata), .npy files numpy writes, the shipped device profiles, a
# plan JSON; corpora grow in build-fuzz/corpus/ between runs. A finding leaves
# build-fuzz/artifacts/<target>/crash-* and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUNS=-1
if [ "${1:-}" = "--runs" ]; then
  RUNS=${2:?fuzz.sh: --runs needs a count}
  shift 2
  SECONDS_PER_TARGET=0
else
  SECONDS_PER_TARGET=${1:-10}
  shift || true
fi
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_braid_file fuzz_onnx_import fuzz_npy fuzz_plan_json
                                     fuzz_device_profile fuzz_passes)
BUILD=${BRAID_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
JOBS=${BRAID_JOBS:-$(nproc)}
command -v clang++ > /dev/null || { echo "fuzz.sh: needs clang (scripts/setup.sh installs it)" >&2; exit 1; }

start=$(date +%s)
CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DBRAID_FUZZ=ON -DBRAID_FUZZ_SANITIZERS="${BRAID_FUZZ_SANITIZERS:-address,undefined}" \
  -DBRAID_FUZZ_TRACE_CMP="${BRAID_FUZZ_TRACE_CMP:-ON}" -DBRAID_CUDA=OFF -DBRAID_BUILD_TESTS=OFF -DBRAID_BUILD_BENCH=OFF \
  -DBRAID_BUILD_EXAMPLES=OFF > /dev/null
cmake --build "$BUILD" -j "$JOBS" --target braid_fuzz
echo "fuzz.sh: built in $(( $(date +%s) - start )) s"

# ---- seed corpora (once) -----------------------------------------------------
SEEDS=$BUILD/seeds
if [ ! -f "$SEEDS/done" ]; then
  rm -rf "$SEEDS"
  mkdir -p "$SEEDS"/{fuzz_braid_file,fuzz_onnx_import,fuzz_npy,fuzz_plan_json,fuzz_device_profile,fuzz_passes}
  cp tests/data/*.braid "$SEEDS/fuzz_braid_file/"
  # ONNX's backend node cases: one small model per op (every 4th, ~230).
  i=0
  for model in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
    [ $(( i++ % 4 )) -eq 0 ] && cp "$model" "$SEEDS/fuzz_onnx_import/$(basename "$(dirname "$model")").onnx"
  done
  cp profiles/*.json "$SEEDS/fuzz_device_profile/"
  /usr/bin/python3 - "$SEEDS/fuzz_npy" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
for i, (dtype, shape) in enumerate([("<f4", (2, 3)), ("<i8", (4,)), ("|b1", (2, 2)), ("<f2", ()),
                                     ("|u1", (1, 3, 2, 2)), ("<i4", (0, 5)), ("|i1", (3,))]):
    np.save(f"{out}/seed{i}.npy", np.arange(int(np.prod(shape))).reshape(shape).astype(dtype))
PY
  cat > "$SEEDS/fuzz_plan_json/plan.json" <<'JSON'
{"policy":"threshold","devices":["cpu","vgpu"],"nodes":[
{"node":"conv1","device":"vgpu","stream":0,"reason":"intensity 12 >= 8","predicted_ms":0.25},
{"node":"conv2","device":"cpu","stream":1,"slice":{"axis":"channels","other_device":"vgpu","ratio":0.5}},
{"node":"fc","device":"cpu","stream":0,"pinned":true}]}
JSON
  printf 'seed' > "$SEEDS/fuzz_passes/seed"
  touch "$SEEDS/done"
fi

# ---- replay regressions, then fuzz ---------------------------------------------
status=0
for target in "${TARGETS[@]}"; do
  bin=$BUILD/tests/fuzz/$target
  corpus=$BUILD/corpus/$target
  artifacts=$BUILD/artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  regressions=$ROOT/tests/fuzz/regressions/$target
  if [ -d "$regressions" ] && [ -n "$(ls -A "$regressions")" ]; then
    "$bin" -runs=0 "$regressions"/* > "$artifacts/replay.log" 2>&1 \
      || { tail -n 30 "$artifacts/replay.log" >&2; echo "fuzz.sh: $target: a regression input fails" >&2; status=1; continue; }
  fi
  log=$artifacts/fuzz.log
  target_start=$(date +%s)
  if "$bin" -seed=1 -max_total_time="$SECONDS_PER_TARGET" -runs="$RUNS" -timeout=20 -rss_limit_mb=2560 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" \
       "$corpus" "$SEEDS/$target" > "$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1)
    echo "fuzz.sh: $target: ${runs:-?} executions in $(( $(date +%s) - target_start )) s, ${cov:-cov: ?}, corpus $(ls "$corpus" | wc -l) inputs, no finding"
  else
    tail -n 40 "$log" >&2
    echo "fuzz.sh: $target: FINDING (input in $artifacts/)" >&2
    status=1
  fi
done
echo "fuzz.sh: done in $(( $(date +%s) - start )) s"
exit $status
