#!/usr/bin/python3
"""Side-by-side CPU benchmark: braid vs ONNX Runtime on the same ONNX files.

For each model and each (threads, batch) in {1,2} x {1,8}, runs braid
(`braid run --json --threads T --batch B --iterations K`) and ONNX Runtime
(CPU EP, intra_op_num_threads=T, sequential execution) in separate
processes, ALTERNATING (braid, ORT, braid, ORT, ...) so drift in machine load
hits both alike. Per model: median latency of each (median over rounds of the
per-process median), the ratio braid/ORT, and the peak RSS of each process
(ru_maxrss of the child; the ORT child is a Python process, so its RSS
includes the interpreter and numpy, ~30-40 MB). Ends with the geometric-mean
ratio over the CNNs (every model but vit_b_16) per (threads, batch).
All numbers are CPU measurements on this machine.

  bench/compare_ort.py --build-dir build [--quick] [--models resnet18 ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common  # noqa: E402

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
          "efficientnet_b0", "vit_b_16"]
QUICK_MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1"]
TRANSFORMERS = {"vit_b_16"}


def run_measured(cmd):
    """Runs cmd in its own process and returns (stdout, stderr, status, max RSS MB)."""
    r_fd, w_fd = os.pipe()
    e_r, e_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w_fd, 1)
        os.dup2(e_w, 2)
        os.close(r_fd)
        os.close(e_r)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    os.close(w_fd)
    os.close(e_w)
    chunks, echunks = [], []
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(r_fd, selectors.EVENT_READ, chunks)
    sel.register(e_r, selectors.EVENT_READ, echunks)
    open_fds = 2
    while open_fds:
        for key, _ in sel.select():
            data = os.read(key.fd, 65536)
            if not data:
                sel.unregister(key.fd)
                os.close(key.fd)
                open_fds -= 1
            else:
                key.data.append(data)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return (b"".join(chunks).decode(), b"".join(echunks).decode(), code,
            usage.ru_maxrss / 1024.0)  # Linux: KiB


def ort_child(args):
    """--ort-child MODEL THREADS BATCH ITERATIONS WARMUP: one ORT process."""
    import numpy as np
    path, threads, batch, iterations, warmup = (args[0], int(args[1]), int(args[2]),
                                                int(args[3]), int(args[4]))
    sess = bench_common.ort_session(path, threads)
    inp = sess.get_inputs()[0]
    x = np.random.default_rng(1).uniform(-1, 1, size=(batch, 3, 224, 224)).astype(np.float32)
    feed = {inp.name: x}
    ms = bench_common.timed_ms(lambda: sess.run(None, feed), iterations, warmup)
    print(json.dumps({"latency_ms": {"median": statistics.median(ms), "min": min(ms)}}))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--ort-child":
        ort_child(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--braid", help="the braid binary (default BUILD/tools/braid)")
    parser.add_argument("--zoo", help="folder of <model>_op<opset>.onnx (default BUILD/zoo)")
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--models", nargs="+")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating braid/ORT process pairs per configuration")
    parser.add_argument("--quick", action="store_true",
                        help=f"{', '.join(QUICK_MODELS)}; 5 iterations, 1 warmup, 1 round")
    parser.add_argument("--json-out", help="also write the results here")
    args = parser.parse_args()
    build_dir = os.path.abspath(args.build_dir)
    bench_common.ensure_venv(build_dir)
    if args.quick:
        args.iterations, args.warmup, args.rounds = 5, 1, 1
        args.models = args.models or QUICK_MODELS
    models = args.models or MODELS
    braid = args.braid or bench_common.default_braid(build_dir)
    zoo = args.zoo or bench_common.default_zoo(build_dir)

    results = []
    print("CPU measurements: braid vs ONNX Runtime (CPU EP, sequential), "
          f"{args.iterations} timed runs after {args.warmup} warmup per process, "
          f"{args.rounds} alternating rounds", flush=True)
    header = (f"{'model':<20} {'thr':>3} {'batch':>5} {'braid ms':>9} {'ORT ms':>9} "
              f"{'braid/ORT':>9} {'braid MB':>9} {'ORT MB':>8}")
    print(header)
    print("-" * len(header), flush=True)
    for model in models:
        path = bench_common.zoo_file(zoo, model, args.opset)
        for threads in args.threads:
            for batch in args.batches:
                b_ms, o_ms, b_rss, o_rss, error = [], [], [], [], ""
                for _ in range(args.rounds):
                    out, err, code, rss = run_measured(
                        [braid, "run", path, "--json", "--threads", str(threads), "--batch",
                         str(batch), "--iterations", str(args.iterations), "--warmup",
                         str(args.warmup)])
                    if code != 0:
                        error = f"braid exit {code}: " + (err.strip().splitlines() or ["?"])[-1]
                        break
                    b_ms.append(json.loads(out)["latency_ms"]["median"])
                    b_rss.append(rss)
                    out, err, code, rss = run_measured(
                        [sys.executable, os.path.abspath(__file__), "--ort-child", path,
                         str(threads), str(batch), str(args.iterations), str(args.warmup)])
                    if code != 0:
                        error = f"ORT exit {code}: " + (err.strip().splitlines() or ["?"])[-1]
                        break
                    o_ms.append(json.loads(out)["latency_ms"]["median"])
                    o_rss.append(rss)
                if error:
                    print(f"{model:<20} {threads:>3} {batch:>5}  {error}", flush=True)
                    results.append({"model": model, "threads": threads, "batch": batch,
                                    "error": error})
                    continue
                bm, om = statistics.median(b_ms), statistics.median(o_ms)
                row = {"model": model, "threads": threads, "batch": batch,
                       "braid_ms": bm, "ort_ms": om, "ratio": bm / om,
                       "braid_rss_mb": max(b_rss), "ort_rss_mb": max(o_rss)}
                results.append(row)
                print(f"{model:<20} {threads:>3} {batch:>5} {bm:>9.2f} {om:>9.2f} "
                      f"{bm / om:>9.3f} {max(b_rss):>9.1f} {max(o_rss):>8.1f}", flush=True)
    print()
    print("geometric-mean braid/ORT latency ratio over the CNNs (CPU; <1 means braid faster):")
    for threads in args.threads:
        for batch in args.batches:
            ratios = [r["ratio"] for r in results
                      if "ratio" in r and r["threads"] == threads and r["batch"] == batch
                      and r["model"] not in TRANSFORMERS]
            if ratios:
                gm = bench_common.geomean(ratios)
                print(f"  threads {threads} batch {batch}: {gm:.3f} over {len(ratios)} models")
            else:
                print(f"  threads {threads} batch {batch}: no CNN measured")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
