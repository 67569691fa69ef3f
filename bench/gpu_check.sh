#!/usr/bin/env bash
# braid on a machine with an NVIDIA GPU, run from the unpacked bundle
# (scripts/bundle.sh; docs/cuda.md, "The GPU check"), in under 8 minutes:
#
#   share/braid/gpu_check/gpu_check.sh OUT_DIR
#
# Everything it prints also lands in OUT_DIR (gpu_check.log, one file per
# step, summary.txt); a step that fails or runs past its limit is recorded
# and the next one runs. Steps, most valuable first:
#   1. the GPU: nvidia-smi -L, braid devices --ops;
#   2. the CUDA op cases against kernels/reference (libexec/braid_cuda_tests);
#   3. a device profile measured with PyTorch and numpy (gpu_check.py
#      profile; not braid calibrate, which does not measure CUDA yet);
#   4. models: built-in resnet50 / mobilenet_v2 / resnet18 / vit_tiny and
#      ONNX exports (torchvision resnet50, mobilenet_v2, efficientnet_b0,
#      vit_b_16; yolov8n when ultralytics is there) made with this
#      machine's PyTorch; gpu-only, mixed plans (partition, heft, sparoa)
#      and three seeded random plans with slices (random-1..3) at batch 1,
#      outputs compared with the all-CPU run (max error <= 1e-4 of the
#      output's largest value), each plan also simulated on the measured
#      profile (reality.md); latency at batch 1 and 8;
#   5. PyTorch eager (cudnn.benchmark, TF32 off, the faster of NCHW and
#      channels_last) and, at batch 1 while time is left, torch.compile on
#      the torchvision models, and the side-by-side table (latency.md);
#   6. compute-sanitizer memcheck and racecheck over the op cases.
# Environment: BRAID_GPU_CHECK_QUICK=1 runs batch 1 only and no sanitizer;
# BRAID_GPU_CHECK_SECONDS (default 450) is when no new run starts;
# BRAID_GPU_CHECK_DEVICE=vgpu dry-runs the flow on braid's virtual GPU (no
# profile, no PyTorch step's GPU; every figure then a vgpu one, labelled).
set -uo pipefail
if [ $# -lt 1 ]; then
  sed -n '2,/^set -uo/p' "$0" | sed '$d'
  exit 2
fi
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
HERE=$(cd "$(dirname "$(readlink -f "$0")")/../../.." && pwd)  # the bundle's root
BRAID="$HERE/libexec/braid"
TESTS="$HERE/libexec/braid_cuda_tests"
PY="python3 $HERE/share/braid/gpu_check/gpu_check.py"
QUICK=${BRAID_GPU_CHECK_QUICK:-0}
GPU=${BRAID_GPU_CHECK_DEVICE:-cuda}
exec > >(tee -a "$OUT/gpu_check.log") 2>&1
# shellcheck source=../scripts/nvidia_libs.sh
. "$HERE/libexec/nvidia_libs.sh"
braid_add_nvidia_libs
echo "gpu_check: bundle $HERE, NVIDIA libraries from: ${BRAID_NVIDIA_LIBS:-(none found)}"
START=$(date +%s)

# step NAME LIMIT_S COMMAND...: runs it, output to OUT/NAME.txt and here.
step() {
  local name=$1 limit=$2
  shift 2
  echo "== $name ($(( $(date +%s) - START )) s in)"
  timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  tail -n 25 "$OUT/$name.txt"
  local verdict=ok
  [ $rc -eq 124 ] && verdict="TIMEOUT after ${limit}s"
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && verdict="FAILED (exit $rc)"
  echo "$name: $verdict" | tee -a "$OUT/summary.txt"
  return $rc
}

step gpu 30 bash -c "nvidia-smi -L; nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv; '$BRAID' devices --ops"
if [ "$GPU" = cuda ] && grep -q "cuda: unavailable" "$OUT/gpu.txt"; then
  echo "gpu_check: braid sees no GPU; the rest would measure nothing GPU-side" | tee -a "$OUT/summary.txt"
  exit 1
fi
step op_cases 150 "$TESTS" --gtest_brief=1 --gtest_output="xml:$OUT/op_cases.xml"
if [ "$GPU" = cuda ]; then step profile 90 $PY profile "$OUT/profile.json"; fi
PROFILE_ARGS=()
[ -s "$OUT/profile.json" ] && PROFILE_ARGS=(--profile "$OUT/profile.json")

step export 120 $PY export "$OUT/models"
MODELS=(builtin:resnet50 builtin:mobilenet_v2 builtin:resnet18 builtin:vit_tiny)
for f in "$OUT"/models/*.onnx; do [ -e "$f" ] && MODELS+=("$f"); done
BATCHES=(1 8)
[ "$QUICK" = 1 ] && BATCHES=(1)
: > "$OUT/results.jsonl"

# The whole check stops starting new runs after this many seconds.
DEADLINE=$(( START + ${BRAID_GPU_CHECK_SECONDS:-450} ))
out_of_time() { [ "$(date +%s)" -ge "$DEADLINE" ]; }

# fstep NAME FUNCTION: a step that is a function of this script (each run
# inside it has its own time limit, and none starts after DEADLINE).
fstep() {
  local name=$1
  shift
  echo "== $name ($(( $(date +%s) - START )) s in)"
  "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  tail -n 40 "$OUT/$name.txt"
  local verdict=ok
  [ $rc -ne 0 ] && verdict="FAILED (see $name.txt)"
  echo "$name: $verdict" | tee -a "$OUT/summary.txt"
  return $rc
}

# run_model MODEL LABEL BATCH DEVICES POLICY [OUTPUT_DIR]: braid run --json;
# its median goes to runs.jsonl.
run_model() {
  local model=$1 label=$2 batch=$3 devices=$4 policy=$5 outdir=${6:-}
  if out_of_time; then
    echo "  $label b$batch $policy: not run (out of time)"
    return 1
  fi
  local args=(run "$model" --batch "$batch" --devices "$devices" --policy "$policy"
              --iterations 20 --warmup 3 --json)
  if [ "$devices" != cpu ]; then args+=("${PROFILE_ARGS[@]}"); fi
  if [ -n "$outdir" ]; then args+=(--output-dir "$outdir"); fi
  local json="$OUT/runs/$label.b$batch.$policy.json"
  if timeout 120 "$BRAID" "${args[@]}" > "$json" 2> "$json.err"; then
    python3 - "$json" "$label" "$batch" "$policy" >> "$OUT/runs.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({"model": sys.argv[2], "batch": int(sys.argv[3]), "policy": sys.argv[4],
                  "median_ms": r["latency_ms"]["median"]}))
PY
    echo "  $label b$batch $policy: $(tail -n 1 "$OUT/runs.jsonl")"
  else
    echo "  $label b$batch $policy: FAILED: $(tail -n 3 "$json.err" | tr '\n' ' ')"
    return 1
  fi
}

# simulate MODEL LABEL POLICY: the same policy's plan simulated on the
# measured profile (braid plan), beside the measured latency (the reality
# check); needs the profile.
simulate() {
  [ -s "$OUT/profile.json" ] || return 0
  timeout 120 "$BRAID" plan "$1" --profile "$OUT/profile.json" --policy "$3" --json \
    > "$OUT/runs/$2.plan.$3.json" 2>&1 || { echo "    simulated: braid plan failed"; return 0; }
  python3 - "$OUT/runs/$2.plan.$3.json" "$2" "$3" >> "$OUT/simulated.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({"model": sys.argv[2], "batch": 1, "policy": sys.argv[3],
                  "simulated_ms": r["simulated"]["latency_ms"]}))
PY
  echo "    simulated: $(tail -n 1 "$OUT/simulated.jsonl")"
}

models_step() {
  mkdir -p "$OUT/runs" "$OUT/outputs"
  local failed=0 model label dir policy batch
  for model in "${MODELS[@]}"; do
    label=$(basename "${model#builtin:}" .onnx)
    dir="$OUT/outputs/$label"
    run_model "$model" "$label" 1 cpu cpu-only "$dir/cpu" || { failed=1; continue; }
    for policy in gpu-only partition heft sparoa random-1 random-2 random-3; do
      if run_model "$model" "$label" 1 "cpu,$GPU" "$policy" "$dir/$policy"; then
        $PY compare "$dir/cpu" "$dir/$policy" --rel 1e-4 | sed "s/^/    /" || failed=1
        simulate "$model" "$label" "$policy"
      else
        failed=1
      fi
    done
  done
  for batch in "${BATCHES[@]}"; do
    [ "$batch" = 1 ] && continue
    for model in "${MODELS[@]}"; do
      label=$(basename "${model#builtin:}" .onnx)
      for policy in gpu-only partition heft sparoa; do
        run_model "$model" "$label" "$batch" "cpu,$GPU" "$policy" || failed=1
      done
    done
  done
  return $failed
}

torch_step() {
  local failed=0 name batch
  if [ "$GPU" != cuda ]; then echo "no PyTorch runs: device $GPU"; return 0; fi
  for name in resnet50 mobilenet_v2 efficientnet_b0 vit_b_16; do
    [ -e "$OUT/models/$name.onnx" ] || continue
    for batch in "${BATCHES[@]}"; do
      if out_of_time; then echo "  $name b$batch: not run (out of time)"; failed=1; continue; fi
      # torch.compile at batch 1 only, while at least 4 minutes are left.
      local compile=()
      [ "$batch" = 1 ] && [ $(( DEADLINE - $(date +%s) )) -gt 240 ] && compile=(--compile)
      timeout 150 $PY torch-latency "$name" --batch "$batch" "${compile[@]}" >> "$OUT/torch.jsonl" || failed=1
      tail -n 1 "$OUT/torch.jsonl"
    done
  done
  return $failed
}

# Joins braid's runs and PyTorch's into one row per (model, batch).
table_step() {
  python3 - "$OUT/runs.jsonl" "$OUT/torch.jsonl" > "$OUT/results.jsonl" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    row = rows.setdefault((r["model"], r["batch"]), {"model": r["model"], "batch": r["batch"]})
    if r["policy"] == "gpu-only":
        row["braid_gpu_only_ms"] = r["median_ms"]
    elif r["policy"] != "cpu-only" and not r["policy"].startswith("random-"):
        if r["median_ms"] < row.get("braid_best_mixed_ms", float("inf")):
            row["braid_best_mixed_ms"] = r["median_ms"]
            row["braid_best_mixed_policy"] = r["policy"]
try:
    for line in open(sys.argv[2]):
        t = json.loads(line)
        rows.setdefault((t["model"], t["batch"]), {"model": t["model"], "batch": t["batch"]}).update(t)
except FileNotFoundError:
    pass
for row in rows.values():
    print(json.dumps(row))
PY
  local gpu_name="braid's virtual GPU (vgpu): NOT a GPU measurement"
  [ "$GPU" = cuda ] && gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  { echo "GPU: $gpu_name; braid $(basename "$HERE")"
    $PY table "$OUT/results.jsonl"; } | tee "$OUT/latency.md"
  [ -s "$OUT/simulated.jsonl" ] || return 0
  echo
  echo "reality check: simulated on the measured profile vs measured, batch 1"
  python3 - "$OUT/runs.jsonl" "$OUT/simulated.jsonl" <<'PY' | tee "$OUT/reality.md"
import json, sys
measured = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["batch"] == 1:
        measured[(r["model"], r["policy"])] = r["median_ms"]
print("| model | policy | measured ms | simulated ms | error |")
print("|---|---|---|---|---|")
for line in open(sys.argv[2]):
    s = json.loads(line)
    m = measured.get((s["model"], s["policy"]))
    if m:
        err = (s["simulated_ms"] - m) / m * 100
        print(f"| {s['model']} | {s['policy']} | {m:.3f} | {s['simulated_ms']:.3f} | {err:+.1f}% |")
PY
}

sanitizer_step() {
  local tool rc=0
  command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer is not on PATH"; return 1; }
  for tool in memcheck racecheck; do
    if out_of_time; then echo "$tool: not run (out of time)"; rc=1; continue; fi
    timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 3 "$TESTS" \
      --gtest_brief=1 --gtest_filter='Cases/Gpu*' > "$OUT/sanitizer_$tool.txt" 2>&1
    local r=$?
    echo "$tool: exit $r; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.txt" | tail -n 1)"
    [ $r -ne 0 ] && rc=1
  done
  return $rc
}

: > "$OUT/runs.jsonl"
: > "$OUT/torch.jsonl"
: > "$OUT/simulated.jsonl"
fstep models models_step
fstep torch torch_step
fstep table table_step
if [ "$QUICK" != 1 ] && [ "$GPU" = cuda ]; then fstep sanitizer sanitizer_step; fi
echo "gpu_check: done in $(( $(date +%s) - START )) s; summary:"
cat "$OUT/summary.txt"
