#!/usr/bin/python3
"""NaN / Inf / denormal patterns: braid vs ONNX Runtime (issue 32 item 1).

For each zoo model and each faulty input (all NaN, one NaN pixel, one +Inf
pixel, one -Inf pixel, denormal pixels), runs `braid run --threads 1` and ONNX
Runtime's CPU EP on the same input and compares, per output element, the class
{finite, NaN, +Inf, -Inf}. A row says how many elements of each class each side
gave and whether the patterns are identical; finite values are compared too
(max |braid - ORT| over elements both give finite).

  bench/nan_inf_check.py --build-dir build [--braid PATH] [--zoo DIR]
                         [--models squeezenet1_0 resnet18 mobilenet_v2] [--ops]

--ops first runs single-op models (OP_CASES) on one input holding NaN, +-Inf,
-1, 0, 2, +-1e-40 and 7, and prints both outputs: ONNX Runtime's MaxPool /
GlobalMaxPool / ReduceMax keep a NaN only where their vector loop happens to
meet it last, so braid (which propagates every NaN) differs there by design
(docs/ops.md "NaN and Inf"). Exits 1 when a model's pattern differs. The venv (onnxruntime, numpy) is the build
folder's bench-venv (bench/python_env.sh); the zoo files are exported there
when absent (bench/bench_common.py).
"""
import argparse
import os
import subprocess
import sys
import tempfile
from typing import Callable, Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

MODELS = ["squeezenet1_0", "resnet18", "mobilenet_v2"]
SHAPE = (1, 3, 224, 224)


def inputs() -> Dict[str, "object"]:
    """The faulty inputs: name -> float32 array of SHAPE."""
    import numpy as np
    rng = np.random.default_rng(32)
    base = rng.standard_normal(SHAPE).astype(np.float32)
    cases: Dict[str, Callable[[np.ndarray], None]] = {
        "all NaN": lambda x: x.fill(np.nan),
        "NaN pixel (1,100,100)": lambda x: x.__setitem__((0, 1, 100, 100), np.nan),
        "+Inf pixel (0,50,60)": lambda x: x.__setitem__((0, 0, 50, 60), np.inf),
        "-Inf pixel (2,0,0)": lambda x: x.__setitem__((0, 2, 0, 0), -np.inf),
        "+Inf corner (0,223,223)": lambda x: x.__setitem__((0, 0, 223, 223), np.inf),
        "denormals (row 7)": lambda x: x.__setitem__((0, slice(None), 7), np.float32(1e-40)),
    }
    out = {}
    for name, make in cases.items():
        x = base.copy()
        make(x)
        out[name] = x
    return out


def classes(y: "object") -> "object":
    """Per element: 0 finite, 1 NaN, 2 +Inf, 3 -Inf."""
    import numpy as np
    c = np.zeros(y.shape, np.int8)
    c[np.isnan(y)] = 1
    c[np.isposinf(y)] = 2
    c[np.isneginf(y)] = 3
    return c


def counts(c: "object") -> str:
    import numpy as np
    n = [int(np.count_nonzero(c == k)) for k in range(4)]
    return f"{n[0]}/{n[1]}/{n[2]}/{n[3]}"


def run_braid(braid: str, model: str, x: "object", tmp: str,
              input_name: str = "input") -> Dict[str, "object"]:
    import numpy as np
    path = os.path.join(tmp, "x.npy")
    np.save(path, x)
    out_dir = os.path.join(tmp, "out")
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        os.remove(os.path.join(out_dir, f))
    subprocess.run([braid, "run", model, "--input", f"{input_name}={path}", "--output-dir", out_dir,
                    "--threads", "1"], check=True, stdout=subprocess.DEVNULL)
    return {f[:-4]: np.load(os.path.join(out_dir, f)) for f in os.listdir(out_dir)}


# Single-op models for --ops: (name, op, attributes, constant extra inputs,
# opset, input shape). Inputs carry NaN, +-Inf, -1, 0, 2, +-1e-40 and 7.
OP_CASES: List[Tuple[str, str, Dict[str, object], List[object], int, Tuple[int, ...]]] = [
    ("Relu", "Relu", {}, [], 17, (1, 2, 4, 4)),
    ("LeakyRelu", "LeakyRelu", {"alpha": 0.1}, [], 17, (1, 2, 4, 4)),
    ("Clip(0,6)", "Clip", {}, [0.0, 6.0], 17, (1, 2, 4, 4)),
    ("Clip(max 6)", "Clip", {}, [None, 6.0], 17, (1, 2, 4, 4)),
    ("HardSigmoid", "HardSigmoid", {}, [], 17, (1, 2, 4, 4)),
    ("HardSwish", "HardSwish", {}, [], 17, (1, 2, 4, 4)),
    ("Sigmoid", "Sigmoid", {}, [], 17, (1, 2, 4, 4)),
    ("Exp", "Exp", {}, [], 17, (1, 2, 4, 4)),
    ("Elu", "Elu", {}, [], 17, (1, 2, 4, 4)),
    ("Softplus", "Softplus", {}, [], 17, (1, 2, 4, 4)),
    ("MaxPool 2x2 s2", "MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}, [], 17, (1, 2, 4, 4)),
    ("MaxPool 3x3 s1", "MaxPool", {"kernel_shape": [3, 3]}, [], 17, (1, 2, 4, 4)),
    ("AveragePool 2x2", "AveragePool", {"kernel_shape": [2, 2], "strides": [2, 2]}, [], 17,
     (1, 2, 4, 4)),
    ("GlobalAveragePool", "GlobalAveragePool", {}, [], 17, (1, 2, 4, 4)),
    ("GlobalMaxPool", "GlobalMaxPool", {}, [], 17, (1, 2, 4, 4)),
    ("Softmax", "Softmax", {"axis": -1}, [], 17, (1, 2, 4, 4)),
    ("LogSoftmax", "LogSoftmax", {"axis": -1}, [], 17, (1, 2, 4, 4)),
    ("Tanh", "Tanh", {}, [], 17, (1, 2, 4, 4)),
    ("Max", "Max", {}, [[1.0, float("nan"), 0.0, 3.0]], 17, (1, 2, 4, 4)),
    ("Add", "Add", {}, [[1.0, -float("inf"), 0.0, 3.0]], 17, (1, 2, 4, 4)),
    ("ReduceMax", "ReduceMax", {"axes": [3]}, [], 17, (1, 2, 4, 4)),
]


def op_rows(braid: str, tmp: str) -> List[Tuple[str, str, str, bool]]:
    """Each OP_CASES op on one input holding every special value."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    special = np.array([np.nan, np.inf, -np.inf, -1, 0, 2, 1e-40, -1e-40, 7], np.float32)
    rows = []
    for name, op, attrs, extra, opset, shape in OP_CASES:
        x = np.resize(special, int(np.prod(shape))).reshape(shape).astype(np.float32)
        inits, names = [], ["x"]
        for i, v in enumerate(extra):
            if v is None:
                names.append("")
                continue
            names.append(f"c{i}")
            inits.append(numpy_helper.from_array(np.array(v, np.float32), f"c{i}"))
        graph = helper.make_graph(
            [helper.make_node(op, names, ["y"], **attrs)], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        path = os.path.join(tmp, "op.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
        want = bench_common.ort_session(path, 1).run(None, {"x": x})[0]
        got = run_braid(braid, path, x, tmp, "x")["y"]
        fmt = lambda y: " ".join(f"{v:g}" for v in y.ravel()[:9])  # noqa: E731
        rows.append((name, fmt(got), fmt(want), bool((classes(got) == classes(want)).all())))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--braid", help="braid CLI (default BUILD/tools/braid)")
    ap.add_argument("--zoo", help="zoo folder (default BUILD/zoo)")
    ap.add_argument("--models", nargs="+", default=MODELS)
    ap.add_argument("--ops", action="store_true",
                    help="also single ops on NaN/+-Inf/denormal inputs (first 9 values shown)")
    args = ap.parse_args()
    bench_common.ensure_venv(args.build_dir)
    import numpy as np
    braid = args.braid or bench_common.default_braid(args.build_dir)
    zoo = args.zoo or bench_common.default_zoo(args.build_dir)
    rows: List[Tuple[str, str, str, str, bool, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            path = bench_common.zoo_file(zoo, model, 17)
            ort = bench_common.ort_session(path, 1)
            name = ort.get_outputs()[0].name
            for case, x in inputs().items():
                want = ort.run(None, {"input": x})[0]
                got = run_braid(braid, path, x, tmp)[name]
                cw, cg = classes(want), classes(got)
                both = (cw == 0) & (cg == 0)
                diff = float(np.max(np.abs(got[both] - want[both]))) if both.any() else 0.0
                rows.append((model, case, counts(cg), counts(cw), bool((cw == cg).all()), diff))
    if args.ops:
        with tempfile.TemporaryDirectory() as tmp:
            ops = op_rows(braid, tmp)
        print("| op | braid | ONNX Runtime | same NaN/Inf pattern |")
        print("|---|---|---|---|")
        for name, got, want, same in ops:
            print(f"| {name} | {got} | {want} | {'yes' if same else 'NO'} |")
        print()
    print("| model | input | braid finite/NaN/+Inf/-Inf | ORT finite/NaN/+Inf/-Inf | same pattern "
          "| max abs diff (finite) |")
    print("|---|---|---|---|---|---|")
    for model, case, b, o, same, diff in rows:
        print(f"| {model} | {case} | {b} | {o} | {'yes' if same else 'NO'} | {diff:.2g} |")
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
