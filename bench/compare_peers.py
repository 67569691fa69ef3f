#!/usr/bin/python3
"""braid against ONNX Runtime and OpenVINO on the zoo: CPU, f32, the same thread count.

For every model (bench/zoo.py's list; --models to choose) and every (threads, batch), each
runtime runs in its own process, alternating braid, ONNX Runtime, OpenVINO round by round so
that drift in machine load hits all alike: `braid run --json`, ONNX Runtime's CPU EP
(intra_op_num_threads T, sequential) and OpenVINO's CPU plugin (INFERENCE_NUM_THREADS T,
one stream, LATENCY hint, f32 precision hint, the model reshaped to batch B). Per row: the
median latency of each, braid / min(ORT, OpenVINO), and the peak RSS of each process
(ru_maxrss; the peers' children are Python processes, so their RSS includes the interpreter
and numpy: the header prints that baseline). The summary per (threads, batch) gives the
geometric mean of braid / faster peer, the worst model and the models above 1.15x.

--load runs everything again while one busy process per core competes for the CPU (braid
and the peers under the same load). CPU measurements on this machine; OpenVINO comes from
PyPI (`BUILD/bench-venv/bin/pip install openvino`); without it the OpenVINO column is empty
and the ratio is to ONNX Runtime alone.

  bench/compare_peers.py --build-dir build [--models resnet18 ...] [--threads 1 2]
                         [--batches 1 8] [--rounds 2] [--load] [--markdown F] [--json-out F]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common  # noqa: E402
import compare_ort  # noqa: E402  (run_measured)
import zoo  # noqa: E402  (model list, exports, inputs)

PEERS = ("ort", "openvino")
QUICK_MODELS = ["resnet18", "mobilenet_v3_small", "densenet121", "vit_tiny_patch16_224"]


class _Input:
    def __init__(self, name: str, shape: list, type_: str) -> None:
        self.name, self.shape, self.type = name, shape, type_


class _Meta:
    """zoo.input_for's view of a model (get_inputs()), read from the ONNX file."""

    def __init__(self, path: str) -> None:
        import onnx
        model = onnx.load(path, load_external_data=False)
        initializers = {i.name for i in model.graph.initializer}
        first = next(i for i in model.graph.input if i.name not in initializers)
        dims = [d.dim_value if d.HasField("dim_value") else d.dim_param
                for d in first.type.tensor_type.shape.dim]
        elem = first.type.tensor_type.elem_type
        self.inputs = [_Input(first.name, dims, "tensor(int64)" if elem == 7 else "tensor(float)")]

    def get_inputs(self) -> list:
        return self.inputs


def child(argv: list[str]) -> None:
    """--child RUNTIME MODEL NAME THREADS BATCH ITERATIONS WARMUP: one timed peer process."""
    runtime, path, name = argv[0], argv[1], argv[2]
    threads, batch, iterations, warmup = map(int, argv[3:7])
    input_name, x = zoo.input_for(_Meta(path), name, batch)
    if runtime == "ort":
        sess = bench_common.ort_session(path, threads)
        run = lambda: sess.run(None, {input_name: x})  # noqa: E731
    elif runtime == "openvino":
        request = bench_common.openvino_request(path, threads, input_name, x.shape)
        run = lambda: request.infer({input_name: x})  # noqa: E731
    else:  # "baseline": the interpreter and the runtimes' imports, no model
        import numpy  # noqa: F401
        import onnxruntime  # noqa: F401
        print(json.dumps({"median": 0.0}))
        return
    print(json.dumps({"median": statistics.median(bench_common.timed_ms(run, iterations, warmup))}))


def measure(braid: str, path: str, name: str, threads: int, batch: int, args,
            peers: list[str]) -> dict:
    """Alternating rounds; medians and peak RSS per runtime, or an error."""
    times: dict[str, list[float]] = {r: [] for r in ["braid"] + peers}
    rss: dict[str, float] = {r: 0.0 for r in times}
    for _ in range(args.rounds):
        for runtime in ["braid"] + peers:
            if runtime == "braid":
                cmd = [braid, "run", path, "--json", "--threads", str(threads), "--batch",
                       str(batch), "--iterations", str(args.iterations), "--warmup",
                       str(args.warmup)]
            else:
                cmd = [sys.executable, os.path.abspath(__file__), "--child", runtime, path, name,
                       str(threads), str(batch), str(args.iterations), str(args.warmup)]
            out, err, code, peak = compare_ort.run_measured(cmd)
            if code != 0:
                return {"error": f"{runtime} exit {code}: " +
                        (err.strip().splitlines() or ["?"])[-1][:200]}
            report = json.loads(out)
            times[runtime].append(report["latency_ms"]["median"] if runtime == "braid"
                                  else report["median"])
            rss[runtime] = max(rss[runtime], peak)
    row = {f"{r}_ms": statistics.median(v) for r, v in times.items()}
    row.update({f"{r}_rss_mb": v for r, v in rss.items()})
    row["ratio"] = row["braid_ms"] / min(row[f"{p}_ms"] for p in peers)
    return row


def busy_loop() -> None:
    while True:
        pass


def summarize(rows: list[dict], peers: list[str]) -> list[str]:
    lines = []
    for load in sorted({r["load"] for r in rows}):
        for threads in sorted({r["threads"] for r in rows}):
            for batch in sorted({r["batch"] for r in rows}):
                group = [r for r in rows if (r["load"], r["threads"], r["batch"]) ==
                         (load, threads, batch) and "ratio" in r]
                if not group:
                    continue
                worst = max(group, key=lambda r: r["ratio"])
                above = [r["model"] for r in group if r["ratio"] > 1.15]
                rss_wins = sum(r["braid_rss_mb"] <= min(r[f"{p}_rss_mb"] for p in peers)
                               for r in group)
                lines.append(
                    f"{'loaded' if load else 'idle'}, {threads} thread(s), batch {batch}: "
                    f"braid / faster peer geomean {bench_common.geomean([r['ratio'] for r in group]):.3f} over "
                    f"{len(group)} models, worst {worst['ratio']:.2f} ({worst['model']}), "
                    f"{len(above)} above 1.15x{': ' + ', '.join(above) if above else ''}; "
                    f"braid's peak RSS at or below both peers' on {rss_wins} of {len(group)}")
    return lines


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--braid", help="the braid binary (default BUILD/tools/braid)")
    parser.add_argument("--zoo", help="folder of <model>_op17.onnx (default BUILD/zoo)")
    parser.add_argument("--models", nargs="+", choices=zoo.ALL_MODELS)
    parser.add_argument("--quick", action="store_true",
                        help=f"{', '.join(QUICK_MODELS)}; 1 round of 5 iterations")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--load", action="store_true",
                        help="also measure with one busy process per core competing")
    parser.add_argument("--markdown", help="also write the table here (Markdown)")
    parser.add_argument("--json-out", help="also write the rows here")
    args = parser.parse_args()
    build_dir = os.path.abspath(args.build_dir)
    bench_common.ensure_venv(build_dir)
    if args.quick:
        args.models = args.models or QUICK_MODELS
        args.rounds, args.iterations, args.warmup = 1, 5, 1
    models = args.models or zoo.ALL_MODELS
    braid = args.braid or bench_common.default_braid(build_dir)
    zoo_dir = args.zoo or bench_common.default_zoo(build_dir)
    peers = ["ort"] + (["openvino"] if bench_common.have_openvino() else [])
    _, _, _, baseline = compare_ort.run_measured(
        [sys.executable, os.path.abspath(__file__), "--child", "baseline", "", "", "1", "1",
         "0", "0"])
    print(f"CPU measurements on this machine ({os.cpu_count()} cores); peers: {', '.join(peers)}"
          f"{'' if 'openvino' in peers else ' (openvino not installed in the bench venv)'}; "
          f"a peer child's interpreter + numpy + onnxruntime import alone: {baseline:.0f} MB RSS",
          flush=True)
    header = ["model", "load", "thr", "batch", "braid ms"] + [f"{p} ms" for p in peers] + \
        ["braid/peer", "braid MB"] + [f"{p} MB" for p in peers]
    print(" | ".join(header), flush=True)
    rows: list[dict] = []
    for load in [False, True] if args.load else [False]:
        hogs = []
        if load:
            hogs = [multiprocessing.Process(target=busy_loop, daemon=True)
                    for _ in range(os.cpu_count() or 1)]
            for h in hogs:
                h.start()
        try:
            for name in models:
                path = zoo.model_file(zoo_dir, name)
                if path is None:
                    continue
                for threads in args.threads:
                    for batch in args.batches:
                        row = {"model": name, "load": load, "threads": threads, "batch": batch}
                        row.update(measure(braid, path, name, threads, batch, args, peers))
                        rows.append(row)
                        print(" | ".join(format_row(row, peers)), flush=True)
        finally:
            for h in hogs:
                h.terminate()
    print()
    for line in summarize(rows, peers):
        print(line)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# braid, ONNX Runtime and OpenVINO on the zoo (CPU)\n\n")
            f.write(f"`bench/compare_peers.py` on {os.cpu_count()} cores; a peer child's "
                    f"interpreter + imports alone: {baseline:.0f} MB RSS.\n\n")
            for line in summarize(rows, peers):
                f.write(f"- {line}\n")
            f.write("\n| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n")
            for row in rows:
                f.write("| " + " | ".join(format_row(row, peers)) + " |\n")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if any("error" in r for r in rows) else 0


def format_row(row: dict, peers: list[str]) -> list[str]:
    cells = [row["model"], "loaded" if row["load"] else "idle", str(row["threads"]),
             str(row["batch"])]
    if "error" in row:
        return cells + [row["error"]]
    cells += [f"{row['braid_ms']:.2f}"] + [f"{row[f'{p}_ms']:.2f}" for p in peers]
    cells += [f"{row['ratio']:.2f}", f"{row['braid_rss_mb']:.0f}"]
    return cells + [f"{row[f'{p}_rss_mb']:.0f}" for p in peers]


if __name__ == "__main__":
    sys.exit(main())
