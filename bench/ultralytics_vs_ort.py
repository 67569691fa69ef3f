#!/usr/bin/python3
"""Ultralytics YOLOv8 detection and segmentation: braid against ONNX Runtime.

Exports yolov8n and yolov8n-seg with random weights (built from their yaml: no
download) at opset 17 and 320x320, then per model: the max error of every
output relative to its largest value on a seeded random input in [0, 1), and
the median latency of braid (`braid run --threads T`) and ONNX Runtime (CPU
EP, intra_op_num_threads T), alternating rounds. CPU measurements on this
machine. Needs `ultralytics` in the bench venv (bench/python_env.sh makes the
venv; `BUILD/bench-venv/bin/pip install ultralytics`, from PyPI).

  bench/ultralytics_vs_ort.py --build-dir build [--threads 2] [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

MODELS = ("yolov8n", "yolov8n-seg")
SIZE = 320


def export(name: str, path: str) -> list[str]:
    import torch
    import zoo_models

    torch.manual_seed(0)
    model, x = zoo_models.yolo_model(name)  # SIZE == zoo_models.YOLO_SIZE
    outputs = ["output"] if name == "yolov8n" else ["output", "protos"]
    with torch.no_grad():
        model(x)
    torch.onnx.export(model, (x,), path, opset_version=17, input_names=["input"],
                      output_names=outputs)
    return outputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    bench_common.ensure_venv(args.build_dir)
    import numpy as np
    import onnxruntime as ort

    braid = os.path.join(args.build_dir, "tools", "braid")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="braid_yolo_") as tmp:
        x = np.random.default_rng(0).uniform(0, 1, (1, 3, SIZE, SIZE)).astype(np.float32)
        x_path = os.path.join(tmp, "x.npy")
        np.save(x_path, x)
        for name in MODELS:
            path = os.path.join(tmp, f"{name}.onnx")
            outputs = export(name, path)
            so = ort.SessionOptions()
            so.intra_op_num_threads = args.threads
            so.inter_op_num_threads = 1
            sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            refs = sess.run(None, {"input": x})
            out_dir = os.path.join(tmp, name)
            subprocess.run([braid, "run", path, "--input", f"input={x_path}", "--output-dir", out_dir,
                            "--iterations", "1", "--threads", str(args.threads)],
                           check=True, capture_output=True)
            errors = []
            for out, ref in zip(outputs, refs):
                got = np.load(os.path.join(out_dir, f"{out}.npy"))
                err = float(np.max(np.abs(got.astype(np.float64) - ref))) / float(np.max(np.abs(ref)))
                errors.append(f"{out} {err:.1e}")
                failed += not err <= args.tolerance
            braid_ms, ort_ms = [], []
            for _ in range(args.rounds):
                r = subprocess.run([braid, "run", path, "--json", "--threads", str(args.threads),
                                    "--iterations", "30", "--warmup", "5"],
                                   check=True, capture_output=True, text=True)
                braid_ms.append(json.loads(r.stdout)["latency_ms"]["median"])
                ort_ms.append(statistics.median(
                    bench_common.timed_ms(lambda: sess.run(None, {"input": x}), 30, 5)))
            b, o = statistics.median(braid_ms), statistics.median(ort_ms)
            print(f"{name}: max error / max|ORT| {', '.join(errors)}; braid {b:.2f} ms, "
                  f"ONNX Runtime {o:.2f} ms, ratio {b / o:.2f} ({args.threads} threads, CPU)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
