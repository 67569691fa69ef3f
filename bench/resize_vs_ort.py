#!/usr/bin/python3
"""braid's Resize against ONNX Runtime (CPU EP) on one-node models.

Modes, coordinate transformations, nearest roundings, exclude_outside, 3-D
resizes, Resize-10 and, at opsets 18/19, antialias, axes,
keep_aspect_ratio_policy and half_pixel_symmetric; random inputs in [-1, 1]
(seeded). A case passes when max |braid - ORT| <= 1e-5 (float32 rounding of
sums in another order); a model braid refuses to open (an opset it does not
read yet) is reported and skipped. Exit 1 on any difference or failure.

  bench/resize_vs_ort.py --build-dir build
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

TOLERANCE = 1e-5

# name, opset, input shape, attributes, scales, sizes
CASES: list[tuple[str, int, list[int], dict[str, Any], list[float] | None, list[int] | None]] = [
    ("nearest_half_pixel_up", 13, [1, 3, 5, 4], {"mode": "nearest"}, [1, 1, 2, 2], None),
    ("linear_half_pixel_down", 13, [1, 2, 9, 7], {"mode": "linear"}, [1, 1, 0.5, 0.6], None),
    ("linear_pytorch_sizes", 13, [2, 2, 6, 5],
     {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, None, [2, 2, 1, 9]),
    ("cubic_align_corners", 13, [1, 2, 5, 5],
     {"mode": "cubic", "coordinate_transformation_mode": "align_corners"}, None, [1, 2, 8, 3]),
    ("cubic_exclude_down", 13, [2, 3, 9, 9], {"mode": "cubic", "exclude_outside": 1,
                                               "cubic_coeff_a": -0.5}, None, [2, 3, 4, 13]),
    ("linear_3d", 13, [1, 2, 5, 6, 7], {"mode": "linear"}, [1, 1, 1.5, 0.5, 2], None),
    ("resize10_nearest_down", 10, [1, 2, 9, 8], {"mode": "nearest"}, [1, 1, 0.5, 0.7], None),
    ("resize10_linear", 10, [1, 2, 5, 6], {"mode": "linear"}, [1, 1, 2, 1.5], None),
    ("aa_linear_down", 18, [1, 2, 16, 12], {"mode": "linear", "antialias": 1}, [1, 1, 0.4, 0.6], None),
    ("aa_cubic_down", 18, [1, 2, 16, 12], {"mode": "cubic", "antialias": 1}, None, [1, 2, 5, 7]),
    ("aa_linear_up", 18, [1, 1, 4, 5], {"mode": "linear", "antialias": 1}, [1, 1, 2.5, 1.7], None),
    ("axes_sizes", 18, [1, 3, 10, 8], {"mode": "linear", "axes": [2, 3]}, None, [5, 13]),
    ("aspect_not_larger", 18, [1, 3, 10, 8], {"mode": "nearest", "axes": [2, 3],
                                               "keep_aspect_ratio_policy": "not_larger"}, None, [7, 7]),
    ("aspect_not_smaller", 18, [1, 3, 10, 8], {"mode": "cubic", "axes": [2, 3],
                                                "keep_aspect_ratio_policy": "not_smaller"}, None, [7, 7]),
    ("half_pixel_symmetric", 19, [1, 2, 7, 9],
     {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"}, [1, 1, 1.6, 0.7], None),
    ("nearest_ceil_asymmetric", 19, [1, 2, 7, 9],
     {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "ceil"},
     [1, 1, 2.3, 0.45], None),
]


def one_node_model(path: str, opset: int, shape: list[int], attrs: dict[str, Any],
                   scales: list[float] | None, sizes: list[int] | None) -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits = []
    if opset == 10:
        inputs = ["x", "scales"]
    elif scales is not None:
        inputs = ["x", "", "scales"]
    else:
        inputs = ["x", "", "", "sizes"]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
    else:
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
    node = helper.make_node("Resize", inputs, ["y"], **attrs)
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    args = parser.parse_args()
    bench_common.ensure_venv(args.build_dir)
    import numpy as np
    import onnxruntime as ort

    braid = os.path.join(args.build_dir, "tools", "braid")
    failed = skipped = 0
    for name, opset, shape, attrs, scales, sizes in CASES:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            one_node_model(path, opset, shape, attrs, scales, sizes)
            x = np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32)
            want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
            np.save(os.path.join(d, "x.npy"), x)
            r = subprocess.run([braid, "run", path, "--input", f"x={d}/x.npy", "--output-dir", d,
                                "--iterations", "1"], capture_output=True, text=True)
            if r.returncode != 0:
                if "newer than braid supports" in r.stderr:
                    skipped += 1
                    print(f"SKIP {name}: opset {opset} not read yet")
                    continue
                failed += 1
                print(f"FAIL {name}: {r.stderr.strip()[:200]}")
                continue
            got = np.load(os.path.join(d, "y.npy"))
            err = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
            ok = err <= TOLERANCE
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} {name}: shape {list(got.shape)} (ORT {list(want.shape)}), "
                  f"max abs error {err:.2e}")
    print(f"{len(CASES) - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
