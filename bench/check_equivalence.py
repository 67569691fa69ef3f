#!/usr/bin/python3
"""Numerical equivalence of braid and ONNX Runtime (CPU EP) on torchvision exports.

For each model: the same seeded random input [1,3,224,224] runs through ONNX
Runtime and through `braid run --input input=X.npy --output-dir D`; reports the
max abs error relative to max |ORT output|. Exit 1 if any model exceeds
--tolerance (default 1e-4) or braid fails on it.

  bench/check_equivalence.py --build-dir build [--zoo DIR] [--models resnet18 ...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
          "efficientnet_b0", "vit_b_16"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--braid", help="the braid binary (default BUILD/tools/braid)")
    parser.add_argument("--zoo", help="folder of <model>_op<opset>.onnx (default BUILD/zoo; "
                                      "missing files are exported)")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    build_dir = os.path.abspath(args.build_dir)
    bench_common.ensure_venv(build_dir)
    import numpy as np
    import onnxruntime as ort

    braid = args.braid or bench_common.default_braid(build_dir)
    zoo = args.zoo or bench_common.default_zoo(build_dir)
    rng = np.random.default_rng(args.seed)
    x = rng.uniform(-1, 1, size=(1, 3, 224, 224)).astype(np.float32)
    worst = []
    print(f"{'model':<22} {'max|ref|':>10} {'max abs err':>12} {'rel err':>10}  verdict")
    with tempfile.TemporaryDirectory(prefix="braid_equiv_") as tmp:
        x_path = os.path.join(tmp, "input.npy")
        np.save(x_path, x)
        for model in args.models:
            path = bench_common.zoo_file(zoo, model, args.opset)
            so = ort.SessionOptions()
            so.intra_op_num_threads = args.threads
            sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            ref = sess.run(None, {sess.get_inputs()[0].name: x})[0]
            out_dir = os.path.join(tmp, model)
            run = subprocess.run([braid, "run", path, "--input", f"input={x_path}",
                                  "--output-dir", out_dir, "--iterations", "1", "--warmup", "0",
                                  "--threads", str(args.threads)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if run.returncode != 0:
                msg = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "?"
                print(f"{model:<22} {'':>10} {'':>12} {'':>10}  FAIL braid exit "
                      f"{run.returncode}: {msg}", flush=True)
                worst.append((model, float("inf")))
                continue
            got = np.load(os.path.join(out_dir, "output.npy"))
            if got.shape != ref.shape:
                print(f"{model:<22} shape {got.shape} vs ORT {ref.shape}  FAIL", flush=True)
                worst.append((model, float("inf")))
                continue
            scale = float(np.max(np.abs(ref)))
            err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))))
            rel = err / scale if scale > 0 else err
            ok = rel <= args.tolerance
            worst.append((model, rel))
            verdict = "ok" if ok else "EXCEEDS " + str(args.tolerance)
            if scale == 0:
                # torchvision zero-initialises some heads (vit_b_16 with
                # weights=None): an all-zero output proves little.
                verdict += " (vacuous: ORT output is all zeros)"
            print(f"{model:<22} {scale:>10.4g} {err:>12.4g} {rel:>10.3g}  {verdict}", flush=True)
    bad = [m for m, r in worst if not r <= args.tolerance]
    print(f"{len(worst) - len(bad)} of {len(worst)} models within {args.tolerance} "
          f"(max abs error / max |ORT output|, CPU)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
