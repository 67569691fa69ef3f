#!/usr/bin/python3
"""Quantized (QDQ) ONNX models: braid vs ONNX Runtime and OpenVINO (issue 28).

For each zoo model: ONNX Runtime's quantize_static (QDQ format, int8 per-channel
weights, uint8 activations, MinMax calibration on 8 seeded random inputs) writes
a QDQ model; `braid run --threads 1` and ONNX Runtime's CPU EP run it on one
more seeded input. Prints per model the max |braid - ORT| on the QDQ model
relative to the output's max |value|, the same for the fp32 model, and how far
the QDQ output is from fp32 (the quantization error, for scale).

braid folds QDQ Conv / MatMul / fully connected Gemm into QLinearConv /
QLinearMatMul (oneDNN int8), QDQ Add and Concat into com.microsoft.QLinearAdd /
QLinearConcat and QDQ MaxPool into a uint8 MaxPool, and runs the rest as fake quantization in f32 (docs/quantization.md); ONNX
Runtime runs int8 kernels. Agreement is therefore to about one quantization
step, not bit-exact: the fraction of output elements within one step (the
output DequantizeLinear's scale) of ONNX Runtime's int8 output is printed.

Then latency, side by side in one run: braid int8 (the QDQ file), braid fp32,
ONNX Runtime int8 and OpenVINO int8 (the same QDQ file; OpenVINO when it is
installed in the bench venv), alternating, --rounds times, each `--threads`
threads; the median of the rounds' medians, the ratios, and the geometric
mean of braid int8 over the faster peer.

  bench/qdq_vs_ort.py --build-dir build [--zoo DIR] [--models resnet18 mobilenet_v2 squeezenet1_0]
      [--threads 1] [--rounds 5] [--iterations 20]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
from typing import Dict, List

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0"]
SHAPE = (1, 3, 224, 224)


def structured_input(seed: int):
    """A smooth random image-like tensor (low frequencies plus noise)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    coarse = rng.standard_normal((1, 3, 14, 14)).astype(np.float32)
    image = np.kron(coarse, np.ones((16, 16), dtype=np.float32))
    return (image + 0.2 * rng.standard_normal(SHAPE)).astype(np.float32)


def quantize(fp32_path: str, qdq_path: str, input_name: str) -> None:
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.items = iter([{input_name: structured_input(100 + i)} for i in range(8)])

        def get_next(self):  # type: ignore[override]
            return next(self.items, None)

    quantize_static(fp32_path, qdq_path, Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, weight_type=QuantType.QInt8,
                    activation_type=QuantType.QUInt8)


def run_braid(braid: str, model: str, x, workdir: str):
    import numpy as np
    np.save(os.path.join(workdir, "x.npy"), x)
    out_dir = os.path.join(workdir, "out")
    subprocess.run([braid, "run", model, "--threads", "1", "--iterations", "1", "--warmup", "0",
                    "--input", f"input={os.path.join(workdir, 'x.npy')}", "--output-dir", out_dir],
                   check=True, stdout=subprocess.DEVNULL)
    files = sorted(os.listdir(out_dir))
    return np.load(os.path.join(out_dir, files[0]))


def braid_latency_ms(braid: str, model: str, threads: int, iterations: int) -> float:
    import json
    out = subprocess.run([braid, "run", model, "--threads", str(threads), "--iterations",
                          str(iterations), "--warmup", "3", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return float(json.loads(out)["latency_ms"]["median"])


def ort_latency_ms(model: str, x, threads: int, iterations: int) -> float:
    import time
    session = bench_common.ort_session(model, threads)
    feed = {session.get_inputs()[0].name: x}
    for _ in range(3):
        session.run(None, feed)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        session.run(None, feed)
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[len(times) // 2]


def openvino_latency_ms(model: str, x, threads: int, iterations: int) -> float:
    request = bench_common.openvino_request(model, threads, "input", x.shape)
    return sorted(bench_common.timed_ms(lambda: request.infer({"input": x}), iterations, 3))[iterations // 2]


def output_step(qdq_path: str) -> float:
    """The scale of the DequantizeLinear producing the model's first output."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(qdq_path)
    out = model.graph.output[0].name
    inits = {i.name: i for i in model.graph.initializer}
    for node in model.graph.node:
        if out in node.output and node.op_type == "DequantizeLinear" and node.input[1] in inits:
            return float(numpy_helper.to_array(inits[node.input[1]]).max())
    return float("nan")


def within_one_step(a, b, step: float) -> float:
    import numpy as np
    return float(np.mean(np.abs(a.astype(np.float64) - b) <= step * 1.001))


def run_ort(model: str, x):
    session = bench_common.ort_session(model, 1)
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def relative(a, b) -> float:
    import numpy as np
    return float(np.max(np.abs(a.astype(np.float64) - b))) / max(float(np.max(np.abs(b))), 1e-30)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--braid", default=None)
    parser.add_argument("--zoo", default=None)
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args(argv)
    bench_common.ensure_venv(args.build_dir)
    braid = args.braid or bench_common.default_braid(args.build_dir)
    zoo = args.zoo or bench_common.default_zoo(args.build_dir)
    rows: Dict[str, Dict[str, float]] = {}
    openvino = bench_common.have_openvino()
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.models:
            fp32 = bench_common.zoo_file(zoo, name, 17)
            qdq = os.path.join(workdir, f"{name}_qdq.onnx")
            quantize(fp32, qdq, "input")
            x = structured_input(7)
            ort_q, ort_f = run_ort(qdq, x), run_ort(fp32, x)
            braid_q, braid_f = run_braid(braid, qdq, x, workdir), run_braid(braid, fp32, x, workdir)
            rows[name] = {"qdq": relative(braid_q, ort_q), "fp32": relative(braid_f, ort_f),
                          "quant_error": relative(ort_q, ort_f),
                          "top1": float((braid_q.argmax() == ort_q.argmax())),
                          "step": within_one_step(braid_q, ort_q, output_step(qdq))}
            lat: Dict[str, List[float]] = {"int8": [], "fp32": [], "ort": []}
            if openvino:
                lat["ov"] = []
            for _ in range(args.rounds):  # alternating, so drift hits every runtime alike
                lat["int8"].append(braid_latency_ms(braid, qdq, args.threads, args.iterations))
                lat["fp32"].append(braid_latency_ms(braid, fp32, args.threads, args.iterations))
                lat["ort"].append(ort_latency_ms(qdq, x, args.threads, args.iterations))
                if openvino:
                    lat["ov"].append(openvino_latency_ms(qdq, x, args.threads, args.iterations))
            for k, v in lat.items():
                rows[name]["ms_" + k] = sorted(v)[len(v) // 2]
    print(f"{'model':<16} {'braid vs ORT (QDQ)':>20} {'within 1 step':>14} {'braid vs ORT (fp32)':>20} "
          f"{'ORT QDQ vs fp32':>16} {'top-1 same':>10}")
    for name, r in rows.items():
        print(f"{name:<16} {r['qdq']:>20.2e} {r['step']:>14.4f} {r['fp32']:>20.2e} "
              f"{r['quant_error']:>16.2e} {'yes' if r['top1'] else 'no':>10}")
    print("errors are max |difference| / max |reference|; 'within 1 step': fraction of output "
          "elements within one output quantization step of ORT's int8 output.")
    print()
    print(f"{'model':<16} {'braid int8 ms':>14} {'braid fp32 ms':>14} {'ORT int8 ms':>12} "
          f"{'OpenVINO int8 ms':>17} {'fp32/int8':>10} {'int8/ORT':>9} {'int8/faster peer':>17}")
    ratios = []
    for name, r in rows.items():
        faster = min(r["ms_ort"], r.get("ms_ov", math.inf))
        ratios.append(r["ms_int8"] / faster)
        ov = f"{r['ms_ov']:>17.2f}" if "ms_ov" in r else f"{'-':>17}"
        print(f"{name:<16} {r['ms_int8']:>14.2f} {r['ms_fp32']:>14.2f} {r['ms_ort']:>12.2f} {ov} "
              f"{r['ms_fp32'] / r['ms_int8']:>10.2f} {r['ms_int8'] / r['ms_ort']:>9.2f} {ratios[-1]:>17.2f}")
    print(f"geomean braid int8 / faster peer's int8: {bench_common.geomean(ratios):.3f}"
          f"{'' if openvino else ' (OpenVINO not installed in the bench venv: ORT only)'}")
    print(f"CPU, {args.threads} thread(s), median of {args.rounds} alternating rounds of "
          f"{args.iterations} runs each; OpenVINO with the f32 precision hint (its quantized "
          f"parts run int8).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
