#!/usr/bin/python3
"""Quantized (QDQ) ONNX models: braid vs ONNX Runtime (issue 28, first step).

For each zoo model: ONNX Runtime's quantize_static (QDQ format, int8 per-channel
weights, uint8 activations, MinMax calibration on 8 seeded random inputs) writes
a QDQ model; `braid run --threads 1` and ONNX Runtime's CPU EP run it on one
more seeded input. Prints per model the max |braid - ORT| on the QDQ model
relative to the output's max |value|, the same for the fp32 model, and how far
the QDQ output is from fp32 (the quantization error, for scale).

braid runs QDQ models by folding each weight's DequantizeLinear into f32
weights at load and computing Quantize/DequantizeLinear on activations (fake
quantization in f32); ONNX Runtime runs int8 kernels. Agreement is therefore to
about one quantization step, not bit-exact.

  bench/qdq_vs_ort.py --build-dir build [--zoo DIR] [--models resnet18 mobilenet_v2 squeezenet1_0]
"""
import argparse
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
    args = parser.parse_args(argv)
    bench_common.ensure_venv(args.build_dir)
    braid = args.braid or bench_common.default_braid(args.build_dir)
    zoo = args.zoo or bench_common.default_zoo(args.build_dir)
    rows: Dict[str, Dict[str, float]] = {}
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
                          "top1": float((braid_q.argmax() == ort_q.argmax()))}
    print(f"{'model':<16} {'braid vs ORT (QDQ)':>20} {'braid vs ORT (fp32)':>20} "
          f"{'ORT QDQ vs fp32':>16} {'top-1 same':>10}")
    for name, r in rows.items():
        print(f"{name:<16} {r['qdq']:>20.2e} {r['fp32']:>20.2e} {r['quant_error']:>16.2e} "
              f"{'yes' if r['top1'] else 'no':>10}")
    print("CPU, 1 thread; errors are max |difference| / max |reference|.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
