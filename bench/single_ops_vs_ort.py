#!/usr/bin/python3
"""Single ops side by side: braid (`braid run --json`) and ONNX Runtime (CPU EP) on one-node models.

The ops whose CPU kernels are braid's own elementwise or data-movement code
(Exp, Erf, Mish, Elu, Softplus, PRelu, Tile, DepthToSpace, SpaceToDepth, ...)
at activation sizes of a small CNN. Prints, per op and thread count, both
medians, braid's implementation and the ratio braid / ORT (below 1: braid is
faster), then the geometric mean. Processes alternate per op; a busy host
moves both columns. Random inputs (seeded), never all zeros.

  bench/single_ops_vs_ort.py --build-dir build [--threads 1 2] [--ops Exp PRelu]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

ACTIVATION = [1, 64, 112, 112]

# name, op type, input shape, attributes, initializers (name -> (onnx dtype, dims, values))
Case = tuple[str, str, list[int], dict[str, Any], dict[str, tuple[str, list[int], list[float]]]]
CASES: list[Case] = [
    *[(op, op, ACTIVATION, {}, {})
      for op in ("Exp", "Erf", "Mish", "Elu", "Softplus", "Sin", "Round", "Floor", "Sign")],
    ("PRelu", "PRelu", ACTIVATION, {}, {"slope": ("float", [64, 1, 1], [0.01 * (k + 1) for k in range(64)])}),
    ("Tile", "Tile", [1, 64, 56, 56], {}, {"repeats": ("int64", [4], [2, 1, 2, 2])}),
    ("DepthToSpace", "DepthToSpace", [1, 256, 56, 56], {"blocksize": 2}, {}),
    ("SpaceToDepth", "SpaceToDepth", ACTIVATION, {"blocksize": 2}, {}),
]


def one_node_model(path: str, op: str, shape: list[int], attrs: dict[str, Any],
                   inits: dict[str, tuple[str, list[int], list[float]]]) -> None:
    import onnx
    from onnx import TensorProto, helper

    types = {"float": TensorProto.FLOAT, "int64": TensorProto.INT64}
    tensors = [helper.make_tensor(name, types[kind], dims, values)
               for name, (kind, dims, values) in inits.items()]
    node = helper.make_node(op, ["x", *inits], ["y"], **attrs)
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], tensors)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, path)


def braid_median_ms(braid: str, path: str, threads: int, iterations: int) -> tuple[float, str]:
    """braid run's median latency and where the node ran ("cpu/cpu")."""
    r = subprocess.run([braid, "run", path, "--threads", str(threads), "--iterations", str(iterations),
                        "--warmup", "5", "--json"], capture_output=True, text=True, check=True)
    report = json.loads(r.stdout)
    nodes = report.get("nodes", [])
    where = f"{nodes[0]['device']}/{nodes[0]['implementation']}" if nodes else "?"
    return float(report["latency_ms"]["median"]), where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--braid", default=None, help="the braid program (default BUILD/tools/braid)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--ops", nargs="+", default=None, help="a subset of the case names")
    parser.add_argument("--iterations", type=int, default=40)
    args = parser.parse_args()
    bench_common.ensure_venv(args.build_dir)
    import numpy as np

    braid = args.braid or bench_common.default_braid(args.build_dir)
    cases = [c for c in CASES if args.ops is None or c[0] in args.ops]
    ratios: list[float] = []
    print(f"{'op':<14}{'threads':>8}{'braid ms':>10}{'ORT ms':>10}{'braid/ORT':>11}  braid ran on")
    for name, op, shape, attrs, inits in cases:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, f"{name}.onnx")
            one_node_model(path, op, shape, attrs, inits)
            x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
            for threads in args.threads:
                braid_ms, where = braid_median_ms(braid, path, threads, args.iterations)
                session = bench_common.ort_session(path, threads)
                ort_ms = float(np.median(bench_common.timed_ms(lambda: session.run(None, {"x": x}),
                                                               args.iterations, 5)))
                ratios.append(braid_ms / ort_ms)
                print(f"{name:<14}{threads:>8}{braid_ms:>10.3f}{ort_ms:>10.3f}{ratios[-1]:>11.2f}  {where}",
                      flush=True)
    print(f"geometric mean braid/ORT over {len(ratios)}: {bench_common.geomean(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
