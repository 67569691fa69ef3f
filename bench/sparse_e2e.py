#!/usr/bin/python3
"""End to end on pruned models: braid sparse vs braid dense vs ONNX Runtime.

For each model (default resnet50 and mobilenet_v2 from the torchvision zoo,
bench/bench_common.py), writes a pruned copy of the ONNX file with numpy:
every Conv / Gemm / MatMul weight initializer gets the RATIO (default 0.9)
of its entries with the smallest |w| set to zero, per layer (unstructured,
the same rule as `braid convert --prune`), except the first Conv and the
depthwise Convs, which stay dense. torchvision's export has BatchNorm
already folded into the Conv weights, so every runtime sees the same sparse
weights. Then, on that one pruned file, it runs in separate processes,
ALTERNATING per round so machine drift hits all three alike:

  braid sparse   braid run PRUNED --json ...    (sparse kernels where the
                                                 weight sparsity is above the
                                                 crossover, oneDNN elsewhere)
  braid dense    the same with BRAID_SPARSE=0   (oneDNN only)
  ORT            CPU EP, intra_op_num_threads = threads, sequential

all at batch 1 with the same thread count. It first checks that braid's
output on the pruned model matches ORT's for one input (max |diff| relative
to max |ORT output|), and reports per runtime the median latency (median
over rounds of each process's median), the speedups, and how many nodes ran
on the sparse kernels. These are CPU measurements on this machine; on a
shared machine, compare the ratios of one invocation, not absolute times
across invocations.

  bench/sparse_e2e.py --build-dir build [--models resnet50] [--threads 2]
                      [--ratio 0.9] [--rounds 3] [--iterations 20]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

MODELS = ["resnet50", "mobilenet_v2"]


def prune_onnx(src, dst, ratio):
    """Magnitude-prunes src's Conv/Gemm/MatMul weights into dst; returns a summary."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(src)
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    first_conv = True
    pruned = zeroed = total = kept_dense = 0
    seen = set()
    for node in graph.node:
        if node.op_type not in ("Conv", "Gemm", "MatMul") or len(node.input) < 2:
            continue
        w_name = node.input[1]
        if w_name not in inits:
            continue
        w = numpy_helper.to_array(inits[w_name])
        if node.op_type == "Conv":
            group = next((a.i for a in node.attribute if a.name == "group"), 1)
            is_first, first_conv = first_conv, False
            if is_first or (group > 1 and w.shape[1] == 1):
                kept_dense += 1
                continue
        if w.dtype != np.float32 or w.ndim < 2 or w_name in seen:
            continue
        seen.add(w_name)
        flat = w.reshape(-1).copy()
        k = int(round(ratio * flat.size))
        if k > 0:
            # The k smallest |w|, ties broken by position (a stable sort).
            order = np.argsort(np.abs(flat), kind="stable")
            flat[order[:k]] = 0.0
        inits[w_name].CopyFrom(numpy_helper.from_array(flat.reshape(w.shape), w_name))
        pruned += 1
        zeroed += int(np.count_nonzero(flat == 0))
        total += flat.size
    onnx.save(model, dst)
    return {"layers_pruned": pruned, "layers_dense": kept_dense,
            "weights": total, "zeros": zeroed}


def run_braid(braid, path, threads, iterations, warmup, sparse, extra=()):
    env = dict(os.environ)
    if not sparse:
        env["BRAID_SPARSE"] = "0"
    cmd = [braid, "run", path, "--json", "--threads", str(threads), "--batch", "1",
           "--iterations", str(iterations), "--warmup", str(warmup), *extra]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"braid exit {r.returncode}: " +
                           (r.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(r.stdout)


def run_ort(path, threads, iterations, warmup):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare_ort.py")
    r = subprocess.run([sys.executable, script, "--ort-child", path, str(threads), "1",
                        str(iterations), str(warmup)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ORT exit {r.returncode}: " +
                           (r.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(r.stdout)["latency_ms"]


def check_outputs(braid, path, threads, work):
    """max |braid - ORT| / max |ORT| on one random input (braid sparse)."""
    import numpy as np
    import onnxruntime as ort
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    x = np.random.default_rng(7).uniform(-1, 1, size=(1, 3, 224, 224)).astype(np.float32)
    x_path = os.path.join(work, "x.npy")
    np.save(x_path, x)
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir, exist_ok=True)
    run_braid(braid, path, threads, 1, 0, True,
              ["--input", f"{inp.name}={x_path}", "--output-dir", out_dir])
    want = sess.run(None, {inp.name: x})[0]
    name = sess.get_outputs()[0].name
    got = np.load(os.path.join(out_dir, name + ".npy"))
    return float(np.max(np.abs(got - want)) / max(1e-30, float(np.max(np.abs(want)))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--braid", help="the braid binary (default BUILD/tools/braid)")
    parser.add_argument("--zoo", help="folder of <model>_op<opset>.onnx (default BUILD/zoo)")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--ratio", type=float, default=0.9)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json-out", help="also write the results here")
    args = parser.parse_args()
    build_dir = os.path.abspath(args.build_dir)
    bench_common.ensure_venv(build_dir)
    braid = args.braid or bench_common.default_braid(build_dir)
    zoo = args.zoo or bench_common.default_zoo(build_dir)
    work = os.path.join(build_dir, "sparse_e2e")
    os.makedirs(work, exist_ok=True)

    print(f"CPU measurements: pruned to {args.ratio:.0%} unstructured (first conv and "
          f"depthwise dense), batch 1, {args.threads} threads, {args.iterations} timed runs "
          f"after {args.warmup} warmup per process, {args.rounds} alternating rounds",
          flush=True)
    results = []
    for model in args.models:
        src = bench_common.zoo_file(zoo, model, args.opset)
        pruned = os.path.join(work, f"{model}_op{args.opset}_pruned{int(args.ratio * 100)}.onnx")
        summary = prune_onnx(src, pruned, args.ratio)
        print(f"{model}: pruned {summary['layers_pruned']} layers "
              f"({summary['zeros']}/{summary['weights']} weights zero), "
              f"{summary['layers_dense']} convs kept dense -> {pruned}", flush=True)
        row = {"model": model, "threads": args.threads, **summary}
        try:
            with tempfile.TemporaryDirectory(dir=work) as tmp:
                row["max_rel_diff_vs_ort"] = check_outputs(braid, pruned, args.threads, tmp)
            print(f"  braid sparse vs ORT output: max |diff| / max |ORT| = "
                  f"{row['max_rel_diff_vs_ort']:.2e}", flush=True)
            times = {"braid_sparse": [], "braid_dense": [], "ort": []}
            best = {"braid_sparse": [], "braid_dense": [], "ort": []}
            for _ in range(args.rounds):
                s = run_braid(braid, pruned, args.threads, args.iterations, args.warmup, True)
                times["braid_sparse"].append(s["latency_ms"]["median"])
                best["braid_sparse"].append(s["latency_ms"]["min"])
                row["placements_sparse"] = s.get("placements", {})
                d = run_braid(braid, pruned, args.threads, args.iterations, args.warmup, False)
                times["braid_dense"].append(d["latency_ms"]["median"])
                best["braid_dense"].append(d["latency_ms"]["min"])
                o = run_ort(pruned, args.threads, args.iterations, args.warmup)
                times["ort"].append(o["median"])
                best["ort"].append(o["min"])
        except RuntimeError as e:
            print(f"  {e}", flush=True)
            row["error"] = str(e)
            results.append(row)
            continue
        med = {k: statistics.median(v) for k, v in times.items()}
        low = {k: min(v) for k, v in best.items()}
        row.update({f"{k}_ms": v for k, v in med.items()})
        row.update({f"{k}_min_ms": v for k, v in low.items()})
        row["rounds_ms"] = times
        results.append(row)
        print(f"  braid sparse {med['braid_sparse']:8.2f} ms   braid dense "
              f"{med['braid_dense']:8.2f} ms   ORT {med['ort']:8.2f} ms", flush=True)
        print(f"  ORT / braid sparse = {med['ort'] / med['braid_sparse']:.2f}x   "
              f"braid dense / braid sparse = {med['braid_dense'] / med['braid_sparse']:.2f}x   "
              f"nodes per implementation (sparse run): {row['placements_sparse']}", flush=True)
        # The fastest single run of each: on a machine shared with other
        # work, the least disturbed estimate (medians include preemptions).
        print(f"  fastest run: braid sparse {low['braid_sparse']:8.2f} ms   braid dense "
              f"{low['braid_dense']:8.2f} ms   ORT {low['ort']:8.2f} ms   ORT / braid sparse = "
              f"{low['ort'] / low['braid_sparse']:.2f}x", flush=True)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
