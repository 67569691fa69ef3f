#!/usr/bin/env python3
"""braid's reduced-precision conversion (`braid convert --precision int8|bf16`) over
zoo models: output error against braid's f32 run of the same .onnx and latency of
both, side by side in one run.

  build/bench-venv/bin/python bench/precision_zoo.py --build-dir build [--precision int8|bf16] \\
      [--models resnet18 mobilenet_v2 ...] [--threads 1] [--samples 8] [--iterations 20]

Each model (build/zoo/<model>_op17.onnx, exported by bench/zoo.py) is converted
(int8: calibrated on N random N(0,1) samples; bf16: no calibration), then both
files run on the same seeded input of the model's own shape, never seen by the
calibration. Per model: max |reduced - f32| / max |f32| and cosine over every
output, top-1 agreement of the first output, nodes converted / kept f32,
medians of `braid run --iterations I` for each. Random weights and random
inputs: the errors show the arithmetic, not a dataset's accuracy. CPU only.
With --openvino (bf16), OpenVINO's CPU plugin runs the same .onnx on the same
input with INFERENCE_PRECISION_HINT bf16 (same threads, latency hint, median
of I in-process calls after warm-up) right after braid: a peer measured side
by side. Int8 peers: bench/qdq_vs_ort.py.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

DEFAULT_MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "efficientnet_b0", "regnet_x_800mf",
                  "densenet121", "shufflenet_v2_x1_0", "mnasnet1_0", "googlenet", "convnext_tiny"]


PRECISIONS = ("int8", "bf16")


def convert(braid: str, onnx_path: str, out_path: str, precision: str,
            samples: int) -> tuple[int, str]:
    """Returns (exit status, stdout + stderr). bf16 skips convert's own accuracy check
    (this script measures it on an unseen input)."""
    extra = ["--calibration-samples", str(samples)] if precision == "int8" else ["--min-cosine", "0"]
    run = subprocess.run([braid, "convert", onnx_path, "-o", out_path, "-q", "--precision", precision]
                         + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return run.returncode, run.stdout + run.stderr


def conversion_counts(precision: str, summary: str) -> tuple[int, int] | None:
    """(nodes converted, nodes kept f32) from `braid convert`'s summary, or None."""
    pattern = (r"(\d+) nodes quantized.*?(\d+) kept f32" if precision == "int8"
               else r"bf16: (\d+) Conv / MatMul / Gemm nodes compute in bf16.*?(\d+) kept f32")
    found = re.search(pattern, summary, re.S)
    return (int(found.group(1)), int(found.group(2))) if found else None


def run_json(braid: str, model: str, inputs: list[str], out_dir: str, threads: int,
             iterations: int) -> dict:
    args = [braid, "run", model, "--output-dir", out_dir, "--threads", str(threads),
            "--iterations", str(iterations), "--json"]
    for item in inputs:
        args += ["--input", item]
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
    return json.loads(run.stdout)


def agreement(want: list[list[float]], got: list[list[float]]) -> tuple[float, float, bool]:
    """max |got - want| / max |want| and cosine over all outputs (flattened, in order);
    whether the first output's largest element is at the same index."""
    w = [v for out in want for v in out]
    g = [v for out in got for v in out]
    if len(w) != len(g) or not w:
        raise ValueError(f"outputs differ in size: {len(w)} vs {len(g)}")
    error = max(abs(a - b) for a, b in zip(g, w)) / max(max(abs(v) for v in w), 1e-30)
    norm = math.sqrt(sum(v * v for v in w)) * math.sqrt(sum(v * v for v in g))
    cosine = sum(a * b for a, b in zip(w, g)) / max(norm, 1e-30)
    top1 = max(range(len(want[0])), key=want[0].__getitem__) == \
        max(range(len(got[0])), key=got[0].__getitem__)
    return error, cosine, top1


def compare(f32_dir: str, int8_dir: str, names: list[str]) -> tuple[float, float, bool]:
    """agreement() of the outputs `names` braid wrote into the two directories."""
    import numpy as np
    def load(d: str) -> list[list[float]]:
        return [np.load(os.path.join(d, f"{n}.npy")).astype(np.float64).ravel().tolist() for n in names]
    return agreement(load(f32_dir), load(int8_dir))


def seeded_inputs(onnx_path: str, tmp: str) -> list[str]:
    """NAME=FILE.npy for every input of its shape (symbolic dims 1): [-1, 1) floats, or
    integers in [0, 100) (token ids) for an integer input."""
    import numpy as np
    import onnx
    model = onnx.load(onnx_path, load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(2024)
    items = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in value.type.tensor_type.shape.dim]
        path = os.path.join(tmp, f"{len(items)}.npy")
        dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        if np.issubdtype(dtype, np.integer):
            np.save(path, rng.integers(0, 100, dims).astype(dtype))
        else:
            np.save(path, rng.uniform(-1, 1, dims).astype(np.float32))
        items.append(f"{value.name}={path}")
    return items


def openvino_ms(onnx_path: str, inputs: list[str], threads: int, iterations: int,
                precision: str) -> float:
    """Median ms of OpenVINO's CPU plugin at `precision` on the NAME=FILE.npy inputs."""
    import numpy as np
    feeds = {}
    for item in inputs:
        name, path = item.split("=", 1)
        feeds[name] = np.load(path)
    request = bench_common.openvino_request(onnx_path, threads, None,
                                            {n: a.shape for n, a in feeds.items()}, precision)
    times = bench_common.timed_ms(lambda: request.infer(feeds), iterations, warmup=3)
    return sorted(times)[len(times) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--braid")
    parser.add_argument("--zoo")
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    parser.add_argument("--precision", choices=PRECISIONS, default="int8")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--openvino", action="store_true",
                        help="bf16: also time OpenVINO's CPU plugin with its bf16 hint")
    args = parser.parse_args()
    if args.openvino and (args.precision != "bf16" or not bench_common.have_openvino()):
        parser.error("--openvino needs --precision bf16 and the openvino package")
    braid = args.braid or bench_common.default_braid(args.build_dir)
    zoo = args.zoo or bench_common.default_zoo(args.build_dir)
    precision = args.precision
    peer = f" {'OV bf16':>8s} {'braid/OV':>8s}" if args.openvino else ""
    print(f"{'model':22s} {'f32 ms':>8s} {precision + ' ms':>8s} {'speedup':>8s} {'max err':>9s} "
          f"{'cosine':>9s} {'top-1':>6s}  converted / kept f32{peer}")
    speedups = []
    peer_ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            onnx_path = os.path.join(zoo, f"{name}_op17.onnx")
            if not os.path.exists(onnx_path):
                print(f"{name:22s} missing {onnx_path} (bench/zoo.py exports it)")
                continue
            reduced_path = os.path.join(tmp, f"{name}.braid")
            status, text = convert(braid, onnx_path, reduced_path, precision, args.samples)
            if status != 0:
                print(f"{name:22s} FAIL {text.strip().splitlines()[-1] if text.strip() else status}")
                continue
            counts = conversion_counts(precision, text)
            inputs = seeded_inputs(onnx_path, tmp)
            try:
                f32 = run_json(braid, onnx_path, inputs, os.path.join(tmp, name + "_f32"),
                               args.threads, args.iterations)
                reduced = run_json(braid, reduced_path, inputs, os.path.join(tmp, name + "_reduced"),
                                   args.threads, args.iterations)
            except subprocess.CalledProcessError as failed:
                lines = (failed.stderr or "").strip().splitlines()
                print(f"{name:22s} FAIL braid run: {lines[-1] if lines else failed.returncode}")
                continue
            names = [o["name"] for o in f32["outputs"]]
            error, cosine, top1 = compare(os.path.join(tmp, name + "_f32"),
                                          os.path.join(tmp, name + "_reduced"), names)
            f32_ms, reduced_ms = f32["latency_ms"]["median"], reduced["latency_ms"]["median"]
            speedups.append(f32_ms / reduced_ms)
            peer = ""
            if args.openvino:
                try:
                    ov_ms = openvino_ms(onnx_path, inputs, args.threads, args.iterations, precision)
                    peer_ratios.append(reduced_ms / ov_ms)
                    peer = f" {ov_ms:8.2f} {reduced_ms / ov_ms:8.2f}"
                except Exception as failed:  # noqa: BLE001 - a peer failure is a row note
                    peer = f" OpenVINO failed: {str(failed).splitlines()[0][:60]}"
            counted = f"{counts[0]} / {counts[1]}" if counts else "?"
            print(f"{name:22s} {f32_ms:8.2f} {reduced_ms:8.2f} {f32_ms / reduced_ms:7.2f}x "
                  f"{error:9.2e} {cosine:9.5f} {'same' if top1 else 'DIFF':>6s}  "
                  f"{counted:>20s}{peer}", flush=True)
    if speedups:
        calibration = (f"{args.samples} random calibration samples, " if precision == "int8" else "")
        print(f"geomean f32 / {precision} latency: {bench_common.geomean(speedups):.2f}x over "
              f"{len(speedups)} models; CPU, {args.threads} thread(s), {calibration}"
              f"medians of {args.iterations} runs")
    if peer_ratios:
        print(f"geomean braid bf16 / OpenVINO bf16 latency: "
              f"{bench_common.geomean(peer_ratios):.2f} over {len(peer_ratios)} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
