#!/usr/bin/env bash
# The one command for a lent GPU machine (the device tool's `run`, from the
# repository root, with the bundle built here by scripts/bundle.sh carried):
#
#   run(command="bash scripts/gpu_run.sh",
#       carry=["build-bundle/braid-0.2.0-linux-x86_64-cuda.tar.gz"], timeout_s=570)
#
# Unpacks the bundle, runs its gpu_check.sh (bench/gpu_check.sh) and leaves in
# $OUT at most 8 files, as the device tool brings back: summary.txt,
# latency.md, reality.md, gpu_check.log and everything as gpu_check.tar.gz.
# BRAID_GPU_CHECK_SECONDS (default 400) is when the check starts no new run.
set -uo pipefail
OUT=${OUT:?"gpu_run.sh: \$OUT (the device tool's result folder) is not set"}
tarball=$(ls -t build-bundle/braid-*-cuda.tar.gz 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
  echo "gpu_run.sh: no build-bundle/braid-*-cuda.tar.gz: run scripts/bundle.sh and carry it" | tee "$OUT/summary.txt"
  exit 1
fi
work=/tmp/braid-gpu
rm -rf "$work" && mkdir -p "$work"
tar -C "$work" -xzf "$tarball"
bundle=$(echo "$work"/braid-*)
BRAID_GPU_CHECK_SECONDS=${BRAID_GPU_CHECK_SECONDS:-400} timeout 540 \
  "$bundle/share/braid/gpu_check/gpu_check.sh" "$work/out"
rc=$?
for f in summary.txt latency.md reality.md gpu_check.log; do
  [ -e "$work/out/$f" ] && cp "$work/out/$f" "$OUT/"
done
# Logs, JSON and tables only: the exported models and the output arrays are
# hundreds of MB (the tool brings back 16 MiB a file).
tar -C "$work" -czf "$OUT/gpu_check.tar.gz" --exclude='*.onnx' --exclude='*.npy' out
echo "gpu_run.sh: gpu_check exit $rc; results in \$OUT ($(ls "$OUT" | tr '\n' ' '))"
exit $rc
